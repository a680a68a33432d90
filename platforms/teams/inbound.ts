/**
 * `POST /teams/messages`: the Bot Connector's activities, believed only with its signature (auth.ts). A message
 * (mentions of the bot taken out) is said in the conversation's session, signal-with-start, as Slack's are. A card's
 * `Action.Execute` click arrives as an `adaptiveCard/action` invoke and is answered within Teams' time limit with no
 * worker needed: the gate is read from the conversation's memo (the server answers that alone), the decision sent as a
 * signal the server keeps, and the card answered to the clicker says what happened, or that the agent acts on it as
 * soon as a worker runs. The workflow checks every decision as any click (who may decide, four-eyes, quorum).
 */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { onlyRequesterConnects, type Voice } from '../../common/gates/words';
import type { Logger } from '../../infra/log';
import { ClickVerdict } from '../../gateways/click-verdict';
import type { Sessions } from '../../gateways/sessions';
import { GATE_MEMO_KEY, type MemoGate } from '../../workflows/session/gate-memo';
import type { Gate } from '../../workflows/session/contract';
import type { ConnectorAuth } from './auth';
import { CARD_CONTENT_TYPE, connectCard, decidedGateCard, editCard, openGateCard, VERBS } from './cards';
import { teamsSessionWorkflowId, teamsUserId, validConversation, type TeamsConversation } from './ids';

const MAX_BODY = 256 * 1024;
/** How long a click waits for the workflow's verdict before answering "sent" (Teams gives an invoke a few seconds). */
const VERDICT_WAIT_MS = 1_500;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const activitySchema = z.object({
  type: z.string().max(64),
  id: z.string().min(1).max(256),
  serviceUrl: z.string().max(300),
  channelId: z.string().max(64).optional(),
  conversation: z.object({ id: z.string().min(1).max(400) }),
  from: z.object({ id: z.string().max(256), aadObjectId: z.string().regex(GUID).optional() }),
  text: z.string().max(40_000).optional(),
  name: z.string().max(128).optional(),
  value: z.unknown().optional(),
});
type Activity = z.infer<typeof activitySchema>;

const actionSchema = z.object({
  action: z.object({
    type: z.literal('Action.Execute'),
    verb: z.string().max(64),
    data: z.record(z.string(), z.unknown()).default({}),
  }),
});

export interface TeamsInboundDeps {
  auth: ConnectorAuth;
  sessions: Sessions;
  log: Logger;
  connect: (userId: string, provider: string) => { url: string; providerName: string } | undefined;
  /** How people are named on cards (their policy names). */
  voice: Voice;
}

/** The message's words: Teams writes a mention of the bot as `<at>Name</at>` in the text; markup is dropped. */
export function messageText(text: string | undefined): string {
  return (text ?? '')
    .replace(/<at>[^<]*<\/at>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 20_000);
}

const invokeAnswer = (c: Context, card: Record<string, unknown>) =>
  c.json({ statusCode: 200, type: CARD_CONTENT_TYPE, value: card });
const invokeMessage = (c: Context, text: string) =>
  c.json({ statusCode: 200, type: 'application/vnd.microsoft.activity.message', value: text });

export function teamsApp(deps: TeamsInboundDeps): Hono {
  const app = new Hono();
  app.post('/teams/messages', async (c) => {
    const raw = await c.req.text();
    if (raw.length > MAX_BODY) return c.json({ error: 'too large' }, 413);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return c.json({ error: 'not JSON' }, 400);
    }
    const serviceUrl = (body as { serviceUrl?: unknown } | null)?.serviceUrl;
    const verdict = await deps.auth
      .verify(c.req.header('authorization'), serviceUrl)
      .catch((error: unknown) => ({
        ok: false as const,
        reason: `the connector's keys could not be read: ${(error as Error).message}`,
      }));
    if (!verdict.ok) {
      deps.log.warn('teams activity refused', { reason: verdict.reason });
      return c.json({ error: 'unauthorized' }, 401);
    }
    const parsed = activitySchema.safeParse(body);
    if (!parsed.success) return c.json({ error: 'not an activity this bot takes' }, 400);
    const activity = parsed.data;
    const where = { serviceUrl: activity.serviceUrl, conversationId: activity.conversation.id };
    if (!validConversation(where)) return c.json({ error: 'not a conversation this bot answers' }, 400);
    // A person is their Entra object id; anything without one (another bot, an anonymous guest) is not a person here.
    if (!activity.from.aadObjectId) return c.body(null, 200);
    const userId = teamsUserId(activity.from.aadObjectId);
    try {
      if (activity.type === 'message') return await message(c, deps, activity, where, userId);
      if (activity.type === 'invoke' && activity.name === 'adaptiveCard/action')
        return await cardAction(c, deps, activity, where, userId);
    } catch (error) {
      deps.log.warn('teams activity not handled', { type: activity.type, error: (error as Error).message });
      return activity.type === 'invoke'
        ? invokeMessage(c, "The agent's server did not answer: nothing was done. Try again in a moment.")
        : c.json({ error: 'not answering' }, 503);
    }
    return c.body(null, 200);
  });
  return app;
}

async function message(
  c: Context,
  deps: TeamsInboundDeps,
  activity: Activity,
  where: TeamsConversation,
  userId: string,
) {
  const text = messageText(activity.text);
  if (!text) return c.body(null, 200);
  await deps.sessions.start(teamsSessionWorkflowId(where), {
    messageId: `teams-${activity.id}`.slice(0, 128),
    userId,
    text,
    ref: activity.id.slice(0, 100),
  });
  deps.log.info('teams message accepted', { userId });
  return c.body(null, 200);
}

async function cardAction(
  c: Context,
  deps: TeamsInboundDeps,
  activity: Activity,
  where: TeamsConversation,
  userId: string,
) {
  const parsed = actionSchema.safeParse(activity.value);
  if (!parsed.success) return invokeMessage(c, 'That card action is not one of ours; nothing was done.');
  const { verb, data } = parsed.data.action;
  const gateId = typeof data.g === 'string' && data.g.length <= 64 ? data.g : undefined;
  if (!gateId) return invokeMessage(c, 'That card action is not one of ours; nothing was done.');
  const workflowId = teamsSessionWorkflowId(where);
  const memo = await deps.sessions.memo(workflowId);
  const gate = (memo?.[GATE_MEMO_KEY] as Record<string, MemoGate> | undefined)?.[gateId] as Gate | undefined;
  if (!gate || gate.status !== 'pending') {
    const now = await deps.sessions
      .clickOutcome(workflowId, { gateId, userId, since: Date.now() }, VERDICT_WAIT_MS)
      .catch(() => undefined);
    return now?.gate && now.gate.status !== 'pending'
      ? invokeAnswer(c, decidedGateCard(now.gate, deps.voice))
      : invokeMessage(c, 'Nothing waits on this card any more.');
  }
  const verdict = await ClickVerdict.before(deps.sessions, workflowId, { gateId, userId });
  const reason =
    typeof data.reason === 'string' && data.reason.trim() ? data.reason.trim().slice(0, 2_000) : undefined;
  switch (verb) {
    case VERBS.edit: {
      if (gate.kind !== 'approval')
        return invokeMessage(c, 'That card action is not one of ours; nothing was done.');
      if (data.back === true) return invokeAnswer(c, openGateCard(gate, undefined, deps.voice));
      // The memo keeps arguments up to a size; longer ones are edited in the web app.
      if (!('args' in gate) || gate.args === undefined)
        return invokeAnswer(
          c,
          openGateCard(gate, 'These arguments are too long to edit here: use the web app.', deps.voice),
        );
      return invokeAnswer(c, editCard(gate, gate.args, deps.voice));
    }
    case VERBS.editApprove: {
      if (gate.kind !== 'approval')
        return invokeMessage(c, 'That card action is not one of ours; nothing was done.');
      let args: unknown;
      try {
        args = JSON.parse(typeof data.args === 'string' ? data.args : '');
      } catch {
        args = undefined;
      }
      if (!args || typeof args !== 'object' || Array.isArray(args))
        return invokeAnswer(c, editCard(gate, gate.args, deps.voice));
      await deps.sessions.decide(workflowId, {
        gateId,
        userId,
        choice: 'edit',
        args: args as Record<string, unknown>,
      });
      break;
    }
    case VERBS.approve:
    case VERBS.deny:
    case VERBS.always:
      if (gate.kind !== 'approval')
        return invokeMessage(c, 'That card action is not one of ours; nothing was done.');
      await deps.sessions.decide(workflowId, {
        gateId,
        userId,
        choice: verb === VERBS.approve ? 'approve' : verb === VERBS.deny ? 'deny' : 'always',
        ...(verb === VERBS.always ? { scope: 'session' as const } : {}),
        ...(verb === VERBS.deny && reason ? { reason } : {}),
      });
      break;
    case VERBS.answer: {
      if (gate.kind !== 'question')
        return invokeMessage(c, 'That card action is not one of ours; nothing was done.');
      const answers = gate.questions.map((q, index) => {
        const picked = typeof data[`q${index}`] === 'string' ? (data[`q${index}`] as string) : '';
        const other =
          typeof data[`q${index}.other`] === 'string' ? (data[`q${index}.other`] as string).trim() : '';
        return {
          question: q.label,
          selected: picked
            ? picked.split(',').filter((label) => q.options.some((o) => o.label === label))
            : [],
          ...(other ? { custom: other.slice(0, 2_000) } : {}),
        };
      });
      await deps.sessions.answer(workflowId, { gateId, userId, answers });
      break;
    }
    case VERBS.connect: {
      if (gate.kind !== 'credential')
        return invokeMessage(c, 'That card action is not one of ours; nothing was done.');
      if (gate.requesterId !== userId)
        return invokeAnswer(
          c,
          openGateCard(gate, onlyRequesterConnects(gate, deps.voice.mention), deps.voice),
        );
      const link = deps.connect(userId, gate.provider);
      if (!link) return invokeMessage(c, `No provider "${gate.provider}" is configured on this gateway.`);
      return invokeAnswer(c, connectCard(gate, link.url, link.providerName));
    }
    default:
      return invokeMessage(c, 'That card action is not one of ours; nothing was done.');
  }
  deps.log.info('teams click sent', { gateId, verb, userId });
  // The verdict, when a worker answers in time; with none, the decision is kept and acted on when one runs.
  const deadline = Date.now() + VERDICT_WAIT_MS;
  while (Date.now() < deadline) {
    const outcome = await deps.sessions
      .clickOutcome(workflowId, { gateId, userId, since: verdict.from }, VERDICT_WAIT_MS)
      .catch(() => undefined);
    if (!outcome) break;
    const told = verdict.told(outcome);
    if (told) return invokeAnswer(c, openGateCard(gate, told.text, deps.voice));
    if (outcome.gate && outcome.gate.status !== 'pending')
      return invokeAnswer(c, decidedGateCard(outcome.gate, deps.voice));
    if (outcome.gate && verdict.counted(outcome))
      return invokeAnswer(
        c,
        openGateCard(outcome.gate, 'Your approval counts; it waits for more.', deps.voice),
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return invokeAnswer(
    c,
    openGateCard(
      gate,
      'Sent: the agent acts on it as soon as it is running again (this card updates then).',
      deps.voice,
    ),
  );
}
