/**
 * Conversations: the caller's list, a new conversation's id (the workflow starts with its first message,
 * message-route.ts), and one conversation's view as this person may see it (also what the live stream sends).
 */
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Context } from 'hono';
import { webSessionWorkflowId } from '../../common/ids';
import type { SessionView } from '../../workflows/session/contract';
import { hidden, limited, mayUse, sessionParam, type ApiEnv, type WebApi } from './api-context';
import { gateRule } from './gate-rule';
import type { ViewForUser } from './stream-route';

/**
 * The view one user sees: notices addressed to someone else are dropped, and that person's open sign-ins
 * carry their personal Connect link (nobody else gets one).
 */
function forUser(
  view: SessionView,
  userId: string,
  connect: (provider: string, expiresAt: number) => string,
): SessionView {
  return {
    ...view,
    notices: view.notices.filter((n) => !n.to || n.to === userId),
    // Each gate carries its rule in words (gate-rule.ts): the page shows it and decides nothing itself.
    gates: view.gates.map((gate) =>
      gate.kind === 'credential' && gate.status === 'pending' && gate.requesterId === userId
        ? {
            ...gate,
            rule: gateRule(gate),
            connectUrl: connect(gate.provider, gate.expiresAt ?? gate.createdAt + 7 * 24 * 3_600_000),
          }
        : { ...gate, rule: gateRule(gate) },
    ),
  };
}

/** A view as `userId` sees it, with the conversation's Temporal UI link: the same for reads and the stream. */
export const viewFor =
  (api: WebApi): ViewForUser =>
  (view, userId, workflowId) => ({
    ...forUser(view, userId, (p, e) => api.deps.connectUrl(userId, p, e)),
    temporalUrl: api.link(workflowId) ?? null,
  });

export async function listSessions(api: WebApi, c: Context<ApiEnv>) {
  const list = await api.deps.sessions.list(c.get('userId'));
  return c.json({ sessions: list.map((s) => ({ ...s, temporalUrl: api.link(s.workflowId) ?? null })) });
}

export function createSession(api: WebApi, c: Context<ApiEnv>) {
  const refused = limited(c, api.sessionRate, 'new conversations');
  if (refused) return refused;
  const sessionId = randomUUID();
  return c.json(
    {
      sessionId,
      workflowId: webSessionWorkflowId(sessionId),
      temporalUrl: api.link(webSessionWorkflowId(sessionId)) ?? null,
    },
    201,
  );
}

export async function showSession(api: WebApi, c: Context<ApiEnv>) {
  const id = sessionParam(c);
  if (!id.success) return c.json({ error: 'invalid session id' }, 400);
  const workflowId = webSessionWorkflowId(id.data);
  if (!(await mayUse(api, c, workflowId))) return hidden(c);
  try {
    const view = forUser(await api.deps.sessions.state(workflowId), c.get('userId'), (p, e) =>
      api.deps.connectUrl(c.get('userId'), p, e),
    );
    return c.json({ ...view, temporalUrl: api.link(workflowId) ?? null });
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return c.json({ error: 'no such session' }, 404);
    return c.json(
      {
        error:
          'the agent is not answering right now (is a worker running?). Messages and clicks are kept and handled when it is back.',
      },
      503,
    );
  }
}
