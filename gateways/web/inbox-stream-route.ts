/**
 * `GET /api/inbox/stream`: "Needs you" as server-sent events. Each `inbox` event is the person's whole list, sent
 * when it changes (inbox-feed.ts); the page shows it and its count at once, with no polling of its own.
 */
import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { ApiEnv, WebApi } from './api-context';
import type { InboxList } from './inbox';
import { StreamCap, TOO_MANY_STREAMS } from './stream-cap';

const KEEPALIVE_MS = 25_000;

export function mountInboxStream(app: Hono<ApiEnv>, api: WebApi): void {
  const cap = new StreamCap();
  app.get('/inbox/stream', (c) => {
    const userId = c.get('userId');
    const release = cap.take(userId);
    if (!release) return c.json({ error: TOO_MANY_STREAMS }, 429);
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
        release();
      }
    });
  });
}
