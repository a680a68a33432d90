/**
 * `GET /api/conversations/:workflowId`: a Slack or Discord conversation, or a mission run, read on the web by the
 * people who may decide in it (its owner under any of their ids, and whoever may decide one of its gates), so a decision in
 * "Needs you" can be made knowing what led to it. Read-only: people reply in their channel; gates are decided from
 * the inbox. Everyone else gets 404, as for a conversation that does not exist.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Context } from 'hono';
import { hidden, type ApiEnv, type WebApi } from './api-context';
import { viewFor } from './session-routes';
import { gateLetsRead } from '../../common/gates/deciders';

/** Conversations of the chat channels and mission runs; web conversations have their own route. */
const READABLE =
  /^(?:session:slack:[A-Z0-9]{1,40}:[A-Z0-9]{1,40}:\d{1,20}\.\d{1,20}|session:discord:\d{5,25}|mission-run:[0-9a-f-]{36}:\d{1,9})$/;

export async function showConversation(api: WebApi, c: Context<ApiEnv>) {
  const workflowId = c.req.param('workflowId') ?? '';
  if (!READABLE.test(workflowId))
    return c.json({ error: 'not a Slack, Discord or mission conversation' }, 400);
  const userId = c.get('userId');
  const owner = await api.deps.access.ownerOf(workflowId);
  if (owner === null) return hidden(c);
  try {
    const state = await api.deps.sessions.state(workflowId);
    // Its owner under any of their ids, or someone one of its gates lets read (who may decide it; a hand-over's or
    // an escalation's people only while it waits); nobody else, approvers of other tools included.
    const ids = api.deps.access.idsOf(userId);
    const mayRead =
      (owner !== undefined && ids.includes(owner)) ||
      state.gates.some((gate) => ids.some((id) => gateLetsRead(gate, id)));
    if (!mayRead) return hidden(c);
    const view = viewFor(api)(state, userId, workflowId);
    return c.json({ ...(view as object), readOnly: true });
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return hidden(c);
    return c.json(
      { error: 'the agent is not answering right now (is a worker running?); try again in a moment.' },
      503,
    );
  }
}
