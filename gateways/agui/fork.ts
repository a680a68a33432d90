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
  hasNewMessage: boolean,
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
  const from = webSessionWorkflowId(parsed.data.threadId);
  if ((await api.deps.access.check(from, userId)) !== 'allowed')
    return { kind: 'refused', status: 404, error: 'no such conversation to fork' };
  if ((await api.deps.access.check(webSessionWorkflowId(sessionId), userId)) !== 'absent')
    return { kind: 'refused', status: 409, error: 'a fork needs a new threadId: this one is taken' };
  const wait = api.sessionRate.take(userId);
  if (wait !== undefined)
    return { kind: 'refused', status: 429, error: `too many new conversations: try again in ${wait} s` };
  try {
    checkForkModel(parsed.data.model, api.deps.models);
    if (hasNewMessage && parsed.data.mode === 'retry')
      throw new ForkRefused('a retry writes the answer again: send no new message with it');
    const fork = await api.deps.sessions.fork({
      from,
      sessionId,
      messageId: parsed.data.messageId,
      mode: parsed.data.mode,
      by: userId,
      ...(parsed.data.model ? { model: parsed.data.model } : {}),
    });
    return { kind: 'started', fork };
  } catch (error) {
    if (error instanceof ForkRefused) return { kind: 'refused', status: 400, error: error.message };
    throw error;
  }
}
