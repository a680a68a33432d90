/**
 * Fork and retry over AG-UI: a RunAgentInput whose `forwardedProps.fork` names a conversation and a message starts
 * its new `threadId` (which must not exist yet) as a fork of that conversation (gateways/forks.ts), then runs as
 * usual: a retry, or a fork through a person's message, answers at once; a fork through an answer takes the run's
 * new user message, if any, as its first turn (an "edit and send again" in a chat front end).
 *
 *   forwardedProps: { fork: { threadId: "<original>", messageId: "<id>", mode?: "through" | "retry", model? } }
 */
import { z } from 'zod';
import { webSessionIdSchema, webSessionWorkflowId } from '../../common/ids';
import { checkForkModel, ForkRefused, type StartedFork } from '../forks';
import type { WebApi } from '../web/api-context';

const forkPropsSchema = z.strictObject({
  threadId: webSessionIdSchema,
  messageId: z.string().min(1).max(128),
  mode: z.enum(['through', 'retry']).default('through'),
  model: z.string().min(3).max(200).optional(),
});

/** Whether `workflowId` is already this very fork (same original, message and mode), made by an earlier send. */
async function sameFork(
  api: WebApi,
  workflowId: string,
  from: string,
  asked: { messageId: string; mode: string },
): Promise<boolean> {
  const origin = (await api.deps.sessions.memo(workflowId))?.forkedFrom as
    { workflowId?: string; messageId?: string; mode?: string } | undefined;
  return origin?.workflowId === from && origin.messageId === asked.messageId && origin.mode === asked.mode;
}

export type AguiFork =
  | { kind: 'none' }
  | { kind: 'started'; fork: StartedFork }
  | { kind: 'refused'; status: 400 | 404 | 409 | 429; error: string };

/** Starts the fork a run asks for (`forwardedProps.fork`), as `userId`, into `sessionId`; none asked: `none`. */
export async function forkForRun(
  api: WebApi,
  userId: string,
  sessionId: string,
  forwardedProps: unknown,
  newMessageId: string | undefined,
): Promise<AguiFork> {
  const asked = (forwardedProps as { fork?: unknown } | undefined)?.fork;
  if (asked === undefined) return { kind: 'none' };
  const parsed = forkPropsSchema.safeParse(asked);
  if (!parsed.success)
    return {
      kind: 'refused',
      status: 400,
      error: `forwardedProps.fork: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'fork'}: ${i.message}`).join('; ')}`,
    };
  // Taken first: every check below costs a Temporal call.
  const wait = api.sessionRate.take(userId);
  if (wait !== undefined)
    return { kind: 'refused', status: 429, error: `too many new conversations: try again in ${wait} s` };
  const from = webSessionWorkflowId(parsed.data.threadId);
  if ((await api.deps.access.check(from, userId)) !== 'allowed')
    return { kind: 'refused', status: 404, error: 'no such conversation to fork' };
  const target = webSessionWorkflowId(sessionId);
  const existing = await api.deps.access.check(target, userId);
  if (existing === 'allowed' && (await sameFork(api, target, from, parsed.data)))
    // The same run sent again (its answer was lost on the way): the fork exists, the run follows it.
    return { kind: 'none' };
  if (existing !== 'absent')
    return { kind: 'refused', status: 409, error: 'a fork needs a new threadId: this one is taken' };
  try {
    checkForkModel(parsed.data.model, api.deps.models);
    const fork = await api.deps.sessions.fork({
      from,
      sessionId,
      messageId: parsed.data.messageId,
      mode: parsed.data.mode,
      by: userId,
      byIds: api.deps.access.idsOf(userId),
      ...(newMessageId ? { newMessageId } : {}),
      ...(parsed.data.model ? { model: parsed.data.model } : {}),
    });
    return { kind: 'started', fork };
  } catch (error) {
    if (error instanceof ForkRefused) return { kind: 'refused', status: 400, error: error.message };
    throw error;
  }
}
