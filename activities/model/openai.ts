/** `openai`: the Chat Completions API with tool calling, at any compatible base URL (OpenAI, Ollama, vLLM, ...). */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { Message } from '../../workflows/session/contract';
import type { ModelReply } from '../types';
import { retryAfterOf } from './classify-error';
import { callProvider, offeredTools, SDK_CLIENT_OPTIONS } from './provider-call';
import type { CompleteFn } from './complete-fn';
import { requestOrder } from './request-order';
import { countedUsage, estimatedUsage } from './usage';
import { parseToolArguments } from './tool-specs';

export function createOpenAiModel(options: {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  systemPrompt: string;
}): CompleteFn {
  const client = new OpenAI({
    baseURL: options.baseUrl,
    apiKey: options.apiKey ?? 'not-set',
    ...SDK_CLIENT_OPTIONS,
  });
  return async function complete(transcript, signal, extraTools = [], onText, call): Promise<ModelReply> {
    const request = {
      model: options.model,
      // The conversation's calls go to the same cache: each one's prefix is the last one's, plus what was added.
      ...(call?.cacheKey ? { prompt_cache_key: call.cacheKey } : {}),
      messages: [
        { role: 'system' as const, content: options.systemPrompt },
        ...requestOrder(transcript).map(toOpenAi),
      ],
      tools: offeredTools(extraTools, (spec) => ({ type: 'function' as const, function: spec })),
    };
    const response = await callProvider<OpenAI.ChatCompletion>({
      provider: 'openai',
      model: options.model,
      signal,
      onText,
      streamed: (requestOptions, onSnapshot) => {
        const stream = client.chat.completions.stream(
          { ...request, stream_options: { include_usage: true } },
          requestOptions,
        );
        stream.on('content', (_delta, snapshot) => onSnapshot(snapshot));
        return stream.finalChatCompletion();
      },
      whole: (requestOptions) => client.chat.completions.create(request, requestOptions),
      apiError: (error) =>
        error instanceof OpenAI.APIError
          ? {
              status: error.status,
              message: error.code ? `${error.message} (${error.code})` : error.message,
              retryAfterMs: retryAfterOf(error.headers),
            }
          : undefined,
    });
    const message = response.choices[0]?.message;
    // Some compatible servers send no usage: the call is estimated rather than left uncounted.
    const usage =
      countedUsage(
        response.usage?.prompt_tokens,
        response.usage?.completion_tokens,
        response.usage?.prompt_tokens_details?.cached_tokens,
      ) ?? estimatedUsage(request, message);
    return {
      usage,
      text: message?.content ?? '',
      toolCalls: (message?.tool_calls ?? []).flatMap((call) =>
        call.type === 'function'
          ? [{ id: call.id, name: call.function.name, args: parseToolArguments(call.function.arguments) }]
          : [],
      ),
    };
  };
}

function toOpenAi(message: Message): ChatCompletionMessageParam {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.text };
    case 'assistant':
      return message.toolCalls.length
        ? {
            role: 'assistant',
            content: message.text || null,
            tool_calls: message.toolCalls.map((call) => ({
              id: call.id,
              type: 'function' as const,
              function: {
                name: call.name,
                arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args),
              },
            })),
          }
        : { role: 'assistant', content: message.text };
    case 'tool':
      return {
        role: 'tool',
        tool_call_id: message.toolCallId,
        // ask_user's answer is the JSON the README documents; other results say how the call ended.
        content:
          message.name === 'ask_user' && message.status === 'ok'
            ? message.content
            : `[${message.status}] ${message.content}`,
      };
  }
}
