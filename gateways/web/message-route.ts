/**
 * A person's message: starts the conversation if it is new (its first message starts the workflow, owned
 * by the sender) or signals it, within the person's rate limits. Accepted means recorded by Temporal.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import { z } from 'zod';
import { webSessionWorkflowId } from '../../common/ids';
import { hidden, limited, parseBody, sessionParam, type ApiEnv, type WebApi } from './api-context';

const messageBodySchema = z.strictObject({
  text: z.string().trim().min(1, 'the message is empty').max(20_000),
  messageId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .optional(),
});

export async function postMessage(api: WebApi, c: Context<ApiEnv>) {
  const { sessions, log } = api.deps;
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
  let access;
  try {
    access = await api.deps.access.check(webSessionWorkflowId(id.data), c.get('userId'));
  } catch (error) {
    return notSent(error);
  }
  if (access === 'denied') return hidden(c);
  const refused =
    limited(c, api.messageRate, 'messages') ??
    (access === 'absent' ? limited(c, api.sessionRate, 'new conversations') : undefined);
  if (refused) return refused;
  const message = {
    messageId: body.value.messageId ?? randomUUID(),
    userId: c.get('userId'),
    text: body.value.text,
  };
  try {
    if (access === 'absent' && !(await sessions.startOwned(id.data, message))) {
      // Someone started this id between the check and the start: only its owner may post into it.
      if ((await api.deps.access.check(webSessionWorkflowId(id.data), c.get('userId'))) !== 'allowed')
        return hidden(c);
      await sessions.start(webSessionWorkflowId(id.data), message, id.data);
    } else if (access !== 'absent') await sessions.start(webSessionWorkflowId(id.data), message, id.data);
  } catch (error) {
    return notSent(error);
  }
  api.deps.live.nudge(webSessionWorkflowId(id.data));
  log.info('message accepted', {
    workflowId: webSessionWorkflowId(id.data),
    userId: message.userId,
    messageId: message.messageId,
  });
  return c.json({ accepted: true, messageId: message.messageId }, 202);
}
