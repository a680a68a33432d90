/**
 * `GET /api/sessions/:id/stream`: the page's live view (server-sent events). Each tab subscribes to its
 * session's feed in this process (live-views.ts), which pushes a view when the workflow says it changed:
 * an idle session costs the worker nothing, however many tabs are open.
 *
 * A session the caller may not see looks exactly like one that has not started (`not-found`), and such a
 * tab never subscribes, so not one view reaches it. While the model writes an answer, `partial` events carry
 * the text so far (streamed answers, gateways/stream-hub.ts), only to a tab whose access is confirmed.
 */
import type { Context, Hono } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import { webSessionIdSchema, webSessionWorkflowId } from '../../common/ids';
import type { SessionView } from '../../workflows/session/contract';
import type { WebRouteDeps } from './route-deps';
import { LatestEvent } from './latest-event';
import { StreamCap, TOO_MANY_STREAMS } from './stream-cap';

/** A comment line now and then keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 25_000;

const PROBLEMS = {
  'not-found': 'This conversation has not started yet.',
  unavailable: 'The agent is not answering right now; your messages and clicks are kept.',
};

type Variables = { Variables: { userId: string } };

export function mountStream(app: Hono<Variables>, deps: WebRouteDeps, forUser: ViewForUser): void {
  /** Every tab is a connection and a subscription: a person gets a bounded number at once. */
  const cap = new StreamCap();
  /** The body one person is sent for one view: made once per person per change, however many tabs. */
  const bodies = new WeakMap<SessionView, Map<string, string>>();
  const bodyFor = (view: SessionView, userId: string, workflowId: string) => {
    let perUser = bodies.get(view);
    if (!perUser) bodies.set(view, (perUser = new Map()));
    let body = perUser.get(userId);
    if (body === undefined) perUser.set(userId, (body = JSON.stringify(forUser(view, userId, workflowId))));
    return body;
  };

  app.get('/sessions/:id/stream', async (c: Context<Variables>) => {
    const id = webSessionIdSchema.safeParse(c.req.param('id'));
    if (!id.success) return c.json({ error: 'invalid session id' }, 400);
    const workflowId = webSessionWorkflowId(id.data);
    const userId = c.get('userId');
    // A session that does not exist yet may be watched (the page opens the stream before the first message).
    let access = await deps.access.check(workflowId, userId);
    const closed = cap.take(userId);
    if (!closed) return c.json({ error: TOO_MANY_STREAMS }, 429);
    return streamSSE(c, async (stream) => {
      const inbox = new LatestEvent();
      stream.onAbort(() => inbox.close());
      const keepalive = setInterval(() => void stream.write(': keepalive\n\n').catch(() => {}), KEEPALIVE_MS);
      let leave: (() => void) | undefined;
      let leavePartials: (() => void) | undefined;
      try {
        if (access === 'denied') inbox.put({ type: 'not-found' });
        else {
          leave = deps.live.subscribe(workflowId, (event) => inbox.put(event));
          leavePartials = deps.streams?.subscribe(workflowId, (update) =>
            inbox.putPartial({ streamId: update.streamId, text: update.text, done: update.done === true }),
          );
        }
        let lastBody = '';
        let lastProblem = '';
        for (let event = await inbox.take(); event; event = await inbox.take()) {
          if (event.type === 'partial') {
            if (access === 'allowed')
              await stream.writeSSE({ event: 'partial', data: JSON.stringify(event.partial) });
            continue;
          }
          if (event.type === 'state' && access !== 'allowed') {
            access = await deps.access.check(workflowId, userId);
            if (access === 'denied') {
              leave?.();
              leave = undefined;
              leavePartials?.();
              leavePartials = undefined;
              event = { type: 'not-found' };
            }
          }
          if (event.type === 'state') {
            const body = bodyFor(event.view, userId, workflowId);
            lastProblem = '';
            if (body !== lastBody) await stream.writeSSE({ event: 'state', data: (lastBody = body) });
          } else if (event.type !== lastProblem) {
            lastProblem = event.type;
            await writeProblem(stream, event.type);
          }
        }
      } finally {
        clearInterval(keepalive);
        leave?.();
        leavePartials?.();
        closed();
      }
    });
  });
}

export type ViewForUser = (view: SessionView, userId: string, workflowId: string) => unknown;

async function writeProblem(stream: SSEStreamingApi, problem: keyof typeof PROBLEMS): Promise<void> {
  await stream.writeSSE({ event: problem, data: JSON.stringify({ message: PROBLEMS[problem] }) });
}
