/**
 * The model's two activities: a call (its transcript read back from chunks, its text streamed to the web chat and
 * the chat platforms while written, its reply priced and bounded) and a summary of older messages.
 */
import { Context } from '@temporalio/activity';
import { countModelUsage } from './metrics';
import { chatSpan } from './genai-spans';
import { streamContextOf } from '../common/stream-context';
import { modelNameOf, type AppConfig } from '../infra/config';
import type { Logger } from '../infra/log';
import type { StreamSink } from '../infra/stream-relay';
import type { createOutbounds } from './deliver';
import { withHeartbeat } from './heartbeat';
import { boundedReply, createModel, pricedReply } from './model';
import { transcriptResolver } from './model/chunked-transcript';
import { streamedCall } from './model/streaming';
import { summarizeConversation, type SummaryRequest } from './model/summarize';
import type { ModelReply, ModelRequest } from './types';

export interface ModelActivityDeps {
  config: AppConfig;
  log: Logger;
  streamLog: Logger;
  stream: StreamSink | undefined;
  outboundFor: ReturnType<typeof createOutbounds>;
}

export function modelActivities({ config, log, streamLog, stream, outboundFor }: ModelActivityDeps) {
  const complete = createModel(config, log);
  const resolveTranscript = transcriptResolver(config, log);
  return {
    async callModel(request: ModelRequest): Promise<ModelReply> {
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
      const resolved = request.chunked ? await resolveTranscript(workflowId, request.chunked) : undefined;
      const transcript = resolved?.transcript ?? request.transcript ?? [];
      const asked = request.model ?? `${config.model.provider}:${modelNameOf(config.model)}`;
      const reply = await chatSpan({ model: asked, conversationId: workflowId }, () =>
        streamedCall(
          {
            sink: stream,
            chat: outboundFor,
            context: () => streamContextOf(transcript),
            log: (message, error) => streamLog.warn(message, { error: error.message }),
          },
          (signal, onText) =>
            complete(transcript, signal, request.extraTools ?? [], onText, {
              ...(request.model ? { only: request.model } : {}),
              cacheKey: workflowId,
            }),
        ),
      );
      // Priced as the model that answered (a fallback has its own price).
      const answered = reply.model?.slice(reply.model.indexOf(':') + 1) ?? modelNameOf(config.model);
      const answer = boundedReply(pricedReply(reply, config.policy.prices[answered]));
      countModelUsage(reply.model ?? `${config.model.provider}:${modelNameOf(config.model)}`, answer.usage);
      return resolved?.lastLink ? { ...answer, lastLink: resolved.lastLink } : answer;
    },

    /** The durable summary of older messages that stands in for them in model requests. */
    async summarizeConversation(request: SummaryRequest): Promise<string> {
      return await withHeartbeat((signal) => summarizeConversation(complete, request, signal));
    },
  };
}
