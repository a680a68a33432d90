/**
 * Streamed answers' side channel, worker → gateways. While the model writes, the worker's model activity sends
 * the text so far to every gateway (STREAM_URL, authenticated with STREAM_TOKEN); a gateway pushes it to the
 * web chat's open tabs. It never passes through Temporal: workflow history records only the final message, which
 * reaches people the usual way, so a lost update, a gateway restart or a worker killed mid-stream loses nothing
 * (the partial text is replaced by the final one, or by the retried call's own stream).
 */
import type { Logger } from './log';

export const STREAM_PATH = '/internal/stream';
/** Updates of one stream are sent at most this often (the latest text wins). */
const SEND_EVERY_MS = 150;
/** The most of an answer a partial carries (the final message is bounded the same way). */
export const MAX_PARTIAL_CHARS = 100_000;

export interface StreamUpdate {
  workflowId: string;
  /** One model call's attempt: a retry streams afresh under a new id, replacing the partial text. */
  streamId: string;
  text: string;
  /** The call finished: its text is final (the message itself follows through the workflow). */
  done?: boolean;
  /** Order within the stream: updates travel as separate requests, and a late one must not undo a newer. */
  seq?: number;
}

export interface StreamSink {
  publish(update: StreamUpdate): void;
}

/**
 * Hands each stream's latest text to `send`, at most every SEND_EVERY_MS per stream (the end at once), numbered so
 * the receiver can drop an update that arrives after a newer one.
 */
export function throttledSink(send: (update: StreamUpdate) => void): StreamSink {
  const pending = new Map<string, { update: StreamUpdate; timer: NodeJS.Timeout }>();
  const sequences = new Map<string, number>();
  const numbered = (update: StreamUpdate) => {
    const seq = (sequences.get(update.streamId) ?? 0) + 1;
    if (update.done) sequences.delete(update.streamId);
    else sequences.set(update.streamId, seq);
    send({ ...update, seq, text: update.text.slice(0, MAX_PARTIAL_CHARS) });
  };
  return {
    publish(update) {
      const waiting = pending.get(update.streamId);
      if (update.done) {
        if (waiting) clearTimeout(waiting.timer);
        pending.delete(update.streamId);
        return numbered(update);
      }
      if (waiting) {
        waiting.update = update;
        return;
      }
      const timer = setTimeout(() => {
        const latest = pending.get(update.streamId);
        pending.delete(update.streamId);
        if (latest) numbered(latest.update);
      }, SEND_EVERY_MS);
      pending.set(update.streamId, { update, timer });
    },
  };
}

/** Workers on other machines: each update POSTed to every gateway; failures are logged and otherwise ignored. */
export function httpStreamSink(urls: readonly string[], token: string, log: Logger): StreamSink {
  return throttledSink((update) => {
    const body = JSON.stringify(update);
    for (const url of urls)
      void fetch(new URL(STREAM_PATH, url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body,
        signal: AbortSignal.timeout(5_000),
      })
        .then((response) => {
          if (!response.ok) log.warn('stream update refused', { url, status: response.status });
        })
        .catch((error: Error) => log.debug('stream update not sent', { url, error: error.message }));
  });
}
