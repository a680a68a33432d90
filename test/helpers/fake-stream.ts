/**
 * Server-sent events as the model APIs stream them: the fakes write one event at a time with a pause between
 * (a stream that arrives all at once would hide what a person sees while it is written), and stop writing when
 * the caller goes away (an aborted call).
 */
import type { ServerResponse } from 'node:http';

export interface StreamEvent {
  /** The SSE `event:` line (Anthropic names its events; Chat Completions does not). */
  event?: string;
  data: unknown;
}

/** The pieces a text is streamed in: a few characters each, as tokens would be. */
export function pieces(text: string, size = 6): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}

export async function writeStream(
  res: ServerResponse,
  events: StreamEvent[],
  gapMs: number,
  done?: string,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const { event, data } of events) {
    if (res.destroyed) return;
    res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  if (done !== undefined && !res.destroyed) res.write(`data: ${done}\n\n`);
  res.end();
}
