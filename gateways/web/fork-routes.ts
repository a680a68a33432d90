/**
 * `POST /api/sessions/:id/fork`: a new conversation from this one up to a message (gateways/forks.ts), owned by
 * the caller; `{"mode":"retry"}` writes that answer again, with `model` if given. `GET /api/sessions/:id/forks`:
 * the conversation's forks (the lineage the page shows on the original's side). Only people who may use the
 * conversation may fork it or list its forks; everyone else gets 404.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Context } from 'hono';
import { z } from 'zod';
import { webSessionWorkflowId } from '../../common/ids';
import { checkForkModel, ForkRefused } from '../forks';
import { hidden, limited, mayUse, parseBody, sessionParam, type ApiEnv, type WebApi } from './api-context';
import { NOT_ANSWERING } from './message-route';

const forkBody = z.strictObject({
  messageId: z.string().min(1).max(128),
  mode: z.enum(['through', 'retry']).default('through'),
  /** `provider:model`, one of the deployment's (GET /api/me lists them). */
  model: z.string().min(3).max(200).optional(),
});

export async function forkSession(api: WebApi, c: Context<ApiEnv>) {
  const id = sessionParam(c);
  if (!id.success) return c.json({ error: 'invalid session id' }, 400);
  const from = webSessionWorkflowId(id.data);
  if (!(await mayUse(api, c, from))) return hidden(c);
  const body = await parseBody(c, forkBody);
  if (!body.ok) return c.json({ error: body.error }, 400);
  const refused = limited(c, api.sessionRate, 'new conversations');
  if (refused) return refused;
  try {
    checkForkModel(body.value.model, api.deps.models);
    const userId = c.get('userId');
    const fork = await api.deps.sessions.fork({
      from,
      ...body.value,
      by: userId,
      byIds: api.deps.access.idsOf(userId),
    });
    return c.json({ ...fork, temporalUrl: api.link(fork.workflowId) ?? null }, 201);
  } catch (error) {
    if (error instanceof ForkRefused) return c.json({ error: error.message }, 400);
    if (error instanceof WorkflowNotFoundError) return hidden(c);
    api.deps.log.warn('fork failed', { from, error: String(error) });
    return c.json({ error: NOT_ANSWERING }, 503);
  }
}

export async function listForks(api: WebApi, c: Context<ApiEnv>) {
  const id = sessionParam(c);
  if (!id.success) return c.json({ error: 'invalid session id' }, 400);
  const workflowId = webSessionWorkflowId(id.data);
  if (!(await mayUse(api, c, workflowId))) return hidden(c);
  // Each read costs the namespace's visibility rate, as "Needs you" does.
  const refused = limited(c, api.inboxRate, 'reads of forks');
  if (refused) return refused;
  const userId = c.get('userId');
  const ids = api.deps.access.idsOf(userId);
  try {
    // Someone else's fork is theirs: listed only to the policy's approvers, who may read every conversation.
    const forks = await api.deps.sessions.forks(
      workflowId,
      api.deps.access.isApprover(userId) ? undefined : ids,
    );
    return c.json({ forks });
  } catch {
    return c.json({ error: NOT_ANSWERING }, 503);
  }
}
