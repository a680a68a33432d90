/**
 * `GET /api/conversations/:workflowId`: a Slack or Discord conversation, or a mission run, read on the web by the
 * people who may decide in it (its owner under any of their ids, and the policy's approvers), so a decision in
 * "Needs you" can be made knowing what led to it. Read-only: people reply in their channel; gates are decided from
 * the inbox. Everyone else gets 404, as for a conversation that does not exist.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Context } from 'hono';
import { hidden, type ApiEnv, type WebApi } from './api-context';
import { viewFor } from './session-routes';

/** Conversations of the chat channels and mission runs; web conversations have their own route. */
const READABLE =
  /^(?:session:(?:slack|discord):[A-Za-z0-9:._-]{1,200}|mission-run:[A-Za-z0-9-]{1,64}:\d{1,9})$/;

export async function showConversation(api: WebApi, c: Context<ApiEnv>) {
  const workflowId = c.req.param('workflowId') ?? '';
  if (!READABLE.test(workflowId))
    return c.json({ error: 'not a Slack, Discord or mission conversation' }, 400);
  if ((await api.deps.access.check(workflowId, c.get('userId'))) !== 'allowed') return hidden(c);
  try {
    const view = viewFor(api)(await api.deps.sessions.state(workflowId), c.get('userId'), workflowId);
    return c.json({ ...(view as object), readOnly: true });
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return hidden(c);
    return c.json(
      { error: 'the agent is not answering right now (is a worker running?); try again in a moment.' },
      503,
    );
  }
}
