/**
 * A person's message: starts the conversation if it is new (its first message starts the workflow, owned
 * by the sender) or signals it, within the person's rate limits. Accepted means recorded by Temporal.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import { z } from 'zod';
import { webSessionWorkflowId } from '../../common/ids';
import type { UserMessage } from '../../workflows/session/contract';
import { hidden, parseBody, tooMany, sessionParam, type ApiEnv, type WebApi } from './api-context';

const messageBodySchema = z.strictObject({
  text: z.string().trim().min(1, 'the message is empty').max(20_000),
  messageId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .optional(),
});

export async function postMessage(api: WebApi, c: Context<ApiEnv>) {
  const { log } = api.deps;
  const id = sessionParam(c);
  if (!id.success) return c.json({ error: 'invalid session id' }, 400);
  const body = await parseBody(c, messageBodySchema);
  if (!body.ok) return c.json({ error: body.error }, 400);
  // Temporal did not answer (within WEB_DEADLINE_MS): the page keeps the text and its message id for another try,
  // so a message that arrived late after all is taken once.
  const notSent = (error: unknown) => {
    log.warn('message not accepted', { sessionId: id.data, error: (error as Error).message });
    return c.json(
      {
        error:
          "Not sent: the agent's server (Temporal) is not answering right now. Your text is kept here; try again in a moment.",
      },
      503,
    );
  };
  const sent = await deliverMessage(api, c.get('userId'), id.data, {
    messageId: body.value.messageId ?? randomUUID(),
    text: body.value.text,
  });
  if (sent.kind === 'hidden') return hidden(c);
  if (sent.kind === 'limited') {
    c.header('retry-after', String(sent.wait));
    return c.json({ error: tooMany(sent) }, 429);
  }
  if (sent.kind === 'unavailable') return notSent(sent.error);
  const message = sent.message;
  api.deps.live.nudge(webSessionWorkflowId(id.data));
  log.info('message accepted', {
    workflowId: webSessionWorkflowId(id.data),
    userId: message.userId,
    messageId: message.messageId,
  });
  return c.json({ accepted: true, messageId: message.messageId }, 202);
}

/** What the web API's protocol edges (AG-UI, A2A) say when Temporal did not take what the caller sent. */
export const NOT_ANSWERING =
  "The agent's server (Temporal) is not answering right now. Nothing was sent; try again in a moment.";

/**
 * A message id from a client's own: kept when it fits the page's ids, else one made from it with `prefix` (the same id
 * each time it is sent, so a message sent again is taken once).
 */
export function clientMessageId(given: string, prefix: string): string {
  return /^[A-Za-z0-9_-]{1,64}$/.test(given)
    ? given
    : `${prefix}-${createHash('sha256').update(given).digest('hex').slice(0, 40)}`;
}

export type Delivery =
  | { kind: 'sent'; message: UserMessage; started: boolean }
  | { kind: 'hidden' }
  | { kind: 'limited'; what: string; wait: number }
  | { kind: 'unavailable'; error: unknown };

/**
 * Delivers a person's message to a web conversation, as the page and the AG-UI endpoint both do: starts it when it
 * is new (owned by the sender, within their rate of new conversations) or signals it, never into someone else's.
 */
export async function deliverMessage(
  api: WebApi,
  userId: string,
  sessionId: string,
  text: { messageId: string; text: string },
): Promise<Delivery> {
  const { sessions } = api.deps;
  const workflowId = webSessionWorkflowId(sessionId);
  let access;
  try {
    access = await api.deps.access.check(workflowId, userId);
  } catch (error) {
    return { kind: 'unavailable', error };
  }
  if (access === 'denied') return { kind: 'hidden' };
  const wait = api.messageRate.take(userId);
  if (wait !== undefined) return { kind: 'limited', what: 'messages', wait };
  const newWait = access === 'absent' ? api.sessionRate.take(userId) : undefined;
  if (newWait !== undefined) return { kind: 'limited', what: 'new conversations', wait: newWait };
  const message = { messageId: text.messageId, userId, text: text.text };
  try {
    if (access === 'absent' && !(await sessions.startOwned(sessionId, message))) {
      // Someone started this id between the check and the start: only its owner may post into it.
      if ((await api.deps.access.check(workflowId, userId)) !== 'allowed') return { kind: 'hidden' };
      await sessions.start(workflowId, message, sessionId);
    } else if (access !== 'absent') await sessions.start(workflowId, message, sessionId);
  } catch (error) {
    return { kind: 'unavailable', error };
  }
  return { kind: 'sent', message, started: access === 'absent' };
}
