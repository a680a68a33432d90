/**
 * `GET /api/inbox/stream`: "Needs you" as server-sent events. Each `inbox` event is the person's whole list, sent
 * when it changes (inbox-feed.ts); the page shows it and its count at once, with no polling of its own.
 */
import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { ApiEnv, WebApi } from './api-context';
import type { InboxList } from './inbox';

/** Every tab is a connection: a person gets a bounded number at once (as for conversations' live views). */
const MAX_INBOX_STREAMS_PER_PERSON = 12;
const KEEPALIVE_MS = 25_000;

export function mountInboxStream(app: Hono<ApiEnv>, api: WebApi): void {
  const open = new Map<string, number>();
  app.get('/inbox/stream', (c) => {
    const userId = c.get('userId');
    const streams = open.get(userId) ?? 0;
    if (streams >= MAX_INBOX_STREAMS_PER_PERSON)
      return c.json(
        { error: `too many live views open (${MAX_INBOX_STREAMS_PER_PERSON}): close a tab` },
        429,
      );
    open.set(userId, streams + 1);
    return streamSSE(c, async (stream) => {
      let latest: InboxList | undefined;
      let wake: (() => void) | undefined;
      let ended = false;
      const end = () => {
        ended = true;
        wake?.();
      };
      stream.onAbort(end);
      const leave = api.inboxFeeds.subscribe(userId, (list) => {
        latest = list;
        wake?.();
      });
      const keepalive = setInterval(() => void stream.write(': keepalive\n\n').catch(end), KEEPALIVE_MS);
      try {
        while (!ended) {
          if (!latest) await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          const list = latest;
          latest = undefined;
          if (list && !ended) await stream.writeSSE({ event: 'inbox', data: JSON.stringify(list) });
        }
      } finally {
        clearInterval(keepalive);
        leave();
        const left = (open.get(userId) ?? 1) - 1;
        if (left > 0) open.set(userId, left);
        else open.delete(userId);
      }
    });
  });
}
