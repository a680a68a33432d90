/**
 * "Needs you" over the web API: `GET /api/inbox` lists, `POST /api/inbox/decisions` decides one or many (or edits
 * and approves one), `POST /api/inbox/answers` answers a question.
 */
import type { Context } from 'hono';
import { z } from 'zod';
import { answerSubmissionSchema, decisionSchema } from '../../workflows/session/contract';
import { limited, parseBody, type ApiEnv, type WebApi } from './api-context';
import { INBOX_WORKFLOW_ID, InboxCursorError, InboxNotSetUpError } from './inbox';

/** One confirmation decides at most this many: a page of the inbox. */
export const MAX_BATCH = 50;

const inboxDecisionSchema = z
  .strictObject({
    items: z
      .array(
        z.strictObject({
          workflowId: z.string().regex(INBOX_WORKFLOW_ID, 'not a conversation or mission run'),
          gateId: z.string().min(1).max(64),
        }),
      )
      .min(1, 'choose at least one decision')
      .max(MAX_BATCH, `at most ${MAX_BATCH} decisions at once`),
    choice: z.enum(['approve', 'deny', 'delegate', 'edit']),
    reason: z.string().trim().max(2_000).optional(),
    /** Edit & approve: the arguments that will run instead (one decision at a time). */
    args: decisionSchema.shape.args,
    /** Delegate: whom to hand the decisions to (they may decide them from then on). */
    to: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9._@:-]{1,128}$/, "a person's id, e.g. carol")
      .optional(),
  })
  .refine((body) => body.choice !== 'delegate' || body.to, {
    message: 'name the person to hand them to',
    path: ['to'],
  })
  .refine((body) => body.choice !== 'edit' || (body.args && body.items.length === 1), {
    message: 'edit & approve takes the new arguments, for one decision at a time',
    path: ['args'],
  });

const inboxAnswersSchema = z.strictObject({
  workflowId: z.string().regex(INBOX_WORKFLOW_ID, 'not a conversation or mission run'),
  gateId: answerSubmissionSchema.shape.gateId,
  answers: answerSubmissionSchema.shape.answers,
});

/** `GET /api/inbox[?cursor=]`: a page of the person's decisions; `next` in the answer is the cursor of the next. */
export async function listInbox(api: WebApi, c: Context<ApiEnv>) {
  const refused = limited(c, api.inboxRate, 'inbox reads');
  if (refused) return refused;
  const cursor = c.req.query('cursor');
  try {
    return c.json(await api.deps.inbox.list(c.get('userId'), cursor || undefined));
  } catch (error) {
    if (error instanceof InboxCursorError)
      return c.json({ error: `cursor: ${error.message}; start again without one` }, 400);
    if (error instanceof InboxNotSetUpError) return c.json({ error: error.message }, 503);
    throw error;
  }
}

export async function decideFromInbox(api: WebApi, c: Context<ApiEnv>) {
  const refused = limited(c, api.inboxRate, 'inbox requests');
  if (refused) return refused;
  const body = await parseBody(c, inboxDecisionSchema);
  if (!body.ok) return c.json({ error: body.error }, 400);
  const { items, choice, reason, to, args } = body.value;
  const outcomes = await api.deps.inbox.decide(c.get('userId'), items, {
    choice,
    ...(reason ? { reason } : {}),
    ...(to ? { to } : {}),
    ...(args ? { args } : {}),
  });
  for (const outcome of outcomes) if (outcome.ok) api.deps.live.nudge(outcome.workflowId);
  if (outcomes.some((o) => o.ok)) api.inboxFeeds.nudge(c.get('userId'));
  api.deps.log.info('inbox decisions', {
    userId: c.get('userId'),
    choice,
    decided: outcomes.filter((o) => o.ok).length,
    refused: outcomes.filter((o) => !o.ok).length,
  });
  return c.json({ outcomes }, 200);
}

/** A question answered from the inbox, as the person's id the question names; the workflow checks the answers. */
export async function answerFromInbox(api: WebApi, c: Context<ApiEnv>) {
  const refused = limited(c, api.inboxRate, 'inbox requests');
  if (refused) return refused;
  const body = await parseBody(c, inboxAnswersSchema);
  if (!body.ok) return c.json({ error: body.error }, 400);
  const { workflowId, gateId, answers } = body.value;
  const outcome = await api.deps.inbox.answer(c.get('userId'), { workflowId, gateId }, answers);
  if (outcome.ok) {
    api.deps.live.nudge(workflowId);
    api.inboxFeeds.nudge(c.get('userId'));
  }
  api.deps.log.info('inbox answer', { userId: c.get('userId'), workflowId, gateId, ok: outcome.ok });
  return c.json({ outcome }, 200);
}
