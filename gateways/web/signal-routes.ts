/**
 * Clicks and forms: a decision on a gate, answers to a question, the Stop button, Archive. Each becomes a signal,
 * accepted while every worker is down; the workflow checks it and answers the person afterwards.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Context } from 'hono';
import { z } from 'zod';
import { webSessionWorkflowId } from '../../common/ids';
import { isTemporalNotAnswering } from '../../infra/temporal/deadline';
import {
  answerSubmissionSchema,
  decisionSchema,
  gateButtonValueSchema,
} from '../../workflows/session/contract';
import { limited, mayUse, parseBody, sessionParam, type ApiEnv, type WebApi } from './api-context';

const decisionBodySchema = gateButtonValueSchema.extend({
  workflowId: z
    .string()
    .regex(/^session:web:[A-Za-z0-9_-]{1,64}$/, 'the web chat decides on web sessions only'),
  reason: decisionSchema.shape.reason,
  args: decisionSchema.shape.args,
  scope: decisionSchema.shape.scope,
  pattern: decisionSchema.shape.pattern,
});

const answersBodySchema = z.strictObject({
  workflowId: decisionBodySchema.shape.workflowId,
  gateId: answerSubmissionSchema.shape.gateId,
  answers: answerSubmissionSchema.shape.answers,
});

/** A click or a form becomes a signal; the workflow checks it and answers the person afterwards. */
async function acceptSignal(
  api: WebApi,
  c: Context<ApiEnv>,
  what: string,
  send: () => Promise<void>,
  fields: { workflowId: string } & Record<string, unknown>,
) {
  try {
    if (!(await mayUse(api, c, fields.workflowId)))
      return c.json({ error: 'that conversation no longer exists' }, 404);
    await send();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError)
      return c.json({ error: 'that conversation no longer exists' }, 404);
    if (!isTemporalNotAnswering(error)) throw error;
    api.deps.log.warn(`${what} not confirmed`, { ...fields, error: (error as Error).message });
    // It may still land (the signal was sent): a repeated click is answered "already decided", never done twice.
    return c.json(
      {
        error:
          "Not confirmed: the agent's server (Temporal) did not answer. Try again in a moment; a click that did arrive counts once.",
      },
      503,
    );
  }
  api.deps.live.nudge(fields.workflowId);
  api.inboxFeeds.nudge(c.get('userId'));
  api.deps.log.info(`${what} accepted`, { ...fields, userId: c.get('userId') });
  return c.json({ accepted: true }, 202);
}

export async function postDecision(api: WebApi, c: Context<ApiEnv>) {
  const body = await parseBody(c, decisionBodySchema);
  if (!body.ok) return c.json({ error: body.error }, 400);
  const { workflowId, ...rest } = body.value;
  return await acceptSignal(
    api,
    c,
    'decision',
    () => api.deps.sessions.decide(workflowId, { ...rest, userId: c.get('userId') }),
    {
      workflowId,
      gateId: rest.gateId,
      choice: rest.choice,
    },
  );
}

/** The Stop button: stops the turn running in this conversation (its requester or an approver may). */
export async function stopTurn(api: WebApi, c: Context<ApiEnv>) {
  const id = sessionParam(c);
  if (!id.success) return c.json({ error: 'invalid session id' }, 400);
  const workflowId = webSessionWorkflowId(id.data);
  return await acceptSignal(api, c, 'stop', () => api.deps.sessions.stop(workflowId, c.get('userId')), {
    workflowId,
  });
}

/** "Try the fallback now": ends a provider's retry-after wait of the running turn (the workflow checks who may). */
export async function tryModelNow(api: WebApi, c: Context<ApiEnv>) {
  const id = sessionParam(c);
  if (!id.success) return c.json({ error: 'invalid session id' }, 400);
  const workflowId = webSessionWorkflowId(id.data);
  // Each one asks the providers again at once: bounded like messages.
  const refused = limited(c, api.messageRate, 'tries');
  if (refused) return refused;
  return await acceptSignal(
    api,
    c,
    'try-model-now',
    () => api.deps.sessions.tryModelNow(workflowId, c.get('userId')),
    { workflowId },
  );
}

export async function postAnswers(api: WebApi, c: Context<ApiEnv>) {
  const body = await parseBody(c, answersBodySchema);
  if (!body.ok) return c.json({ error: body.error }, 400);
  const { workflowId, ...rest } = body.value;
  return await acceptSignal(
    api,
    c,
    'answers',
    () => api.deps.sessions.answer(workflowId, { ...rest, userId: c.get('userId') }),
    {
      workflowId,
      gateId: rest.gateId,
    },
  );
}

const archiveBodySchema = z.strictObject({ archived: z.boolean() });

/** Archive, or bring back, a conversation in its owner's list (the workflow refuses anyone else, and says so). */
export async function archiveSession(api: WebApi, c: Context<ApiEnv>) {
  const id = sessionParam(c);
  if (!id.success) return c.json({ error: 'invalid session id' }, 400);
  const body = await parseBody(c, archiveBodySchema);
  if (!body.ok) return c.json({ error: body.error }, 400);
  const workflowId = webSessionWorkflowId(id.data);
  const { archived } = body.value;
  return await acceptSignal(
    api,
    c,
    'archive',
    () => api.deps.sessions.archive(workflowId, c.get('userId'), archived),
    { workflowId, archived },
  );
}
