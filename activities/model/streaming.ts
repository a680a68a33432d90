/**
 * Where a model call's text goes while it is written (#22 streamed answers), by conversation:
 * - web: to the gateways over the stream relay (infra/stream-relay.ts), never through Temporal;
 * - Slack and Discord: into one message in the conversation, posted at the first words and edited as often as
 *   each platform's rate limits allow (Slack every 3 s, Discord every 1.2 s); the final message later takes its place (outbound `replaces`).
 *   The message's reference is kept in the activity's heartbeat details, so an attempt after a worker died goes
 *   on editing the same message instead of leaving a second, half-written one.
 */
import { CancelledFailure, Context } from '@temporalio/activity';
import { z } from 'zod';
import type { StreamContext } from '../../common/stream-context';
import type { StreamSink } from '../../infra/stream-relay';
import type { StoppedWriting } from '../../workflows/session/contract';
import { bounded } from '../../workflows/session/transcript';
import type { ChatStreamer } from '../deliver';
import { withHeartbeat } from '../heartbeat';
import type { ModelReply } from '../types';

const streamDetailsSchema = z.object({ streamRef: z.string().min(1).max(100) });

export type StreamedCall = (
  signal: AbortSignal,
  onText: ((snapshot: string) => void) | undefined,
) => Promise<ModelReply>;

export async function streamedCall(
  options: {
    sink: StreamSink | undefined;
    chat: (sessionId: string) => Promise<ChatStreamer | undefined>;
    /** Who asked, and the turn's tool steps so far (shown by Slack's streaming messages). */
    context: () => StreamContext;
    log: (message: string, error: Error) => void;
  },
  call: StreamedCall,
): Promise<ModelReply> {
  const info = Context.current().info;
  const workflowId = info.workflowExecution?.workflowId ?? '';
  // What was written by a Stop is kept (stoppedWriting below); an answer nobody watches is not streamed at all.
  let written = '';
  const tracked: StreamedCall = (signal, onText) =>
    call(signal, (snapshot) => {
      written = snapshot;
      onText?.(snapshot);
    });
  try {
    if (workflowId.startsWith('session:web:') && options.sink)
      return await toGateways(options.sink, workflowId, `${info.activityId}:${info.attempt}`, tracked);
    const chat = /^session:(slack|discord|teams):/.test(workflowId)
      ? await options.chat(workflowId)
      : undefined;
    if (chat) return await toChat(chat, workflowId, options, tracked);
    return await withHeartbeat((signal) => call(signal, undefined));
  } catch (error) {
    throw stoppedWriting(error, written);
  }
}

/**
 * Stopped (the activity was cancelled) after some words were written: the cancellation carries them, so the
 * workflow keeps them in the transcript marked "(stopped)", as the chat message keeps them (workflows/session/turn.ts).
 */
function stoppedWriting(error: unknown, written: string): unknown {
  const { cancellationSignal } = Context.current();
  if (!cancellationSignal.aborted || !written.trim()) return error;
  const stopped: StoppedWriting = { written: bounded(written) };
  return new CancelledFailure('stopped while the answer was written', [stopped]);
}

/** The web: every update to the gateways; the stream ends with the final text, what was written when stopped, or empty. */
async function toGateways(sink: StreamSink, workflowId: string, streamId: string, call: StreamedCall) {
  let text = '';
  let latest = '';
  try {
    const reply = await withHeartbeat((signal) =>
      call(signal, (snapshot) => {
        latest = snapshot;
        sink.publish({ workflowId, streamId, text: snapshot });
      }),
    );
    text = reply.text;
    return reply;
  } catch (error) {
    // Stopped: the page goes on showing what was written (the transcript keeps it too) instead of withdrawing it.
    if (Context.current().cancellationSignal.aborted && latest.trim()) text = `${latest} (stopped)`;
    throw error;
  } finally {
    sink.publish({ workflowId, streamId, text, done: true });
  }
}

async function toChat(
  chat: ChatStreamer,
  sessionId: string,
  { context: contextOf, log }: { context: () => StreamContext; log: (message: string, error: Error) => void },
  call: StreamedCall,
): Promise<ModelReply> {
  const context = Context.current();
  const { info } = context;
  // This attempt: only the attempt that started a streaming message appends to it.
  const owner = `${info.workflowExecution?.runId ?? ''}:${info.activityId}:${info.attempt}`;
  const earlier = streamDetailsSchema.safeParse(info.heartbeatDetails);
  let ref = earlier.success ? earlier.data.streamRef : undefined;
  let latest = '';
  let shown = '';
  let timer: NodeJS.Timeout | undefined;
  /** The first post failed: this attempt writes no streamed message (it may exist, unanswered); the final one is posted. */
  let gaveUp = false;
  // One post or edit at a time, in order; a failed one is logged (the final message arrives regardless).
  let chain = Promise.resolve();
  /** `final`: the text as it stays, made when its turn in the chain comes (from what was shown by then). */
  const update = (text: string | (() => string), final = false) => {
    chain = chain
      .then(async () => {
        if (gaveUp || (final && !ref)) return;
        const now = typeof text === 'string' ? text : text();
        if (ref) await chat.streamEdit(sessionId, ref, now, { final, owner });
        else {
          ref = await chat.streamPost(sessionId, now, contextOf(), owner);
          // Known to Temporal at once: an attempt after this worker dies edits this message, not a new one.
          context.heartbeat({ streamRef: ref });
        }
        shown = now;
      })
      .catch((error: Error) => {
        if (!ref) gaveUp = true;
        log('streamed message not updated', error);
      });
  };
  const onText = (snapshot: string) => {
    latest = snapshot;
    timer ??= setTimeout(() => {
      timer = undefined;
      // A message shows only so much: past that, edits would change nothing the reader sees.
      if (latest.trim() && latest !== shown && shown.length < chat.streamChars) update(latest);
    }, chat.streamEditEveryMs(ref));
  };
  try {
    const reply = await withHeartbeat(
      (signal) => call(signal, onText),
      undefined,
      () => (ref ? { streamRef: ref } : undefined),
    );
    clearTimeout(timer);
    // A retry that answered with tool calls only leaves no text to replace the earlier attempt's words.
    if (ref && !reply.text.trim()) update('(continued below)', true);
    await chain;
    if (!ref || !reply.text.trim()) return reply;
    // Slack's streaming message takes the rest of the answer now; the final message then only closes it.
    const streamRef = chat.streamDone ? await chat.streamDone(sessionId, ref, reply.text, owner) : ref;
    return { ...reply, streamRef };
  } catch (error) {
    clearTimeout(timer);
    // Given up by the server (its heartbeats stopped counting): a newer attempt may own the message; leave it.
    const reason = (context.cancellationSignal.reason as Error | undefined)?.message;
    const superseded = reason === 'NOT_FOUND' || reason === 'TIMED_OUT';
    // Stopped, or failed: the message keeps what was written and says so (a retry rewrites it).
    const stopped = context.cancellationSignal.aborted;
    // Queued even while the first post is under way: it applies once that post has its reference.
    if (!superseded) update(() => `${shown || latest} ${stopped ? '(stopped)' : '(interrupted)'}`, true);
    else
      chain = chain
        .then(() => (ref ? chat.streamAbandon?.(sessionId, ref, owner) : undefined))
        .catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
    await chain;
  }
}
