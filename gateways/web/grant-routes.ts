/**
 * Grants ("always allow"): the caller's standing grants and this conversation's, and revoking one. A
 * revocation is a signal, accepted while every worker is down.
 */
import type { Context } from 'hono';
import { z } from 'zod';
import { grantScopeSchema } from '../../common/grants';
import { webSessionIdSchema, webSessionWorkflowId } from '../../common/ids';
import { hidden, mayUse, parseBody, type ApiEnv, type WebApi } from './api-context';

const revokeBodySchema = z.strictObject({
  grantId: z.string().min(1).max(64),
  scope: grantScopeSchema,
  sessionId: webSessionIdSchema.optional(),
});

export async function listGrants(api: WebApi, c: Context<ApiEnv>) {
  const userId = c.get('userId');
  const sessionId = webSessionIdSchema.safeParse(c.req.query('sessionId'));
  try {
    const mine = await api.deps.sessions.userGrants(userId);
    let sessionGrants: unknown[] = [];
    if (sessionId.success) {
      sessionGrants = await api.deps.sessions
        .state(webSessionWorkflowId(sessionId.data))
        .then((view) => view.grants.filter((g) => g.userId === userId))
        .catch(() => []);
    }
    return c.json({ grants: [...sessionGrants, ...mine] });
  } catch {
    return c.json({ error: 'grants cannot be read right now (is a worker running?)' }, 503);
  }
}

export async function revokeGrant(api: WebApi, c: Context<ApiEnv>) {
  const { sessions } = api.deps;
  const body = await parseBody(c, revokeBodySchema);
  if (!body.ok) return c.json({ error: body.error }, 400);
  const userId = c.get('userId');
  if (body.value.scope === 'user') await sessions.revokeUserGrant(userId, body.value.grantId);
  else {
    if (!body.value.sessionId)
      return c.json({ error: 'sessionId is required to revoke a conversation grant' }, 400);
    if (!(await mayUse(api, c, webSessionWorkflowId(body.value.sessionId)))) return hidden(c);
    await sessions.revokeSessionGrant(webSessionWorkflowId(body.value.sessionId), userId, body.value.grantId);
    api.deps.live.nudge(webSessionWorkflowId(body.value.sessionId));
  }
  return c.json({ accepted: true }, 202);
}
