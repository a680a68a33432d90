/**
 * Slack inbound: Bolt listeners that parse, authenticate (Bolt verifies the signing secret) and signal.
 * Every action and view listener acknowledges within Slack's 3 seconds, also while no worker runs:
 * signals need only the Temporal server. Nothing pending is kept here.
 */
import type {
  App,
  RespondFn,
  BlockAction,
  ButtonAction,
  SlackActionMiddlewareArgs,
  SlackViewMiddlewareArgs,
  ViewSubmitAction,
} from '@slack/bolt';
import { z } from 'zod';
import type { Logger } from '../../common/log';
import { answerSchema } from '../../common/tools/ask-user';
import { gateButtonValueSchema, type GateButtonValue } from '../../workflows/session/contract';
import { parseSlackSessionId, slackSessionWorkflowId, type SlackThread } from './ids';
import { connectLinkBlocks, denyModal, editModal } from './render';
import { answerModal, readAnswers } from './render-question';
import type { ChatSessions } from '../chat-sessions';

const MENTION = /<@[A-Z0-9]+>/g;

const id = z.string().regex(/^[A-Z0-9]{1,32}$/);
const ts = z.string().regex(/^\d{1,12}\.\d{1,9}$/);

/** A person's message event; bot messages, edits and other subtypes do not parse and are ignored. */
const incomingMessageSchema = z.object({
  user: z.string().regex(/^[UW][A-Z0-9]{0,31}$/),
  text: z.string().max(40_000),
  ts,
  thread_ts: ts.optional(),
  channel: id,
  channel_type: z.string().optional(),
  subtype: z.never().optional(),
  bot_id: z.never().optional(),
});

/** Parses an event into its thread and the user message it carries; anything malformed gives undefined. */
function parseIncoming(event: unknown, team: unknown) {
  const parsedTeam = id.safeParse(team);
  const parsed = incomingMessageSchema.safeParse(event);
  if (!parsedTeam.success || !parsed.success) return undefined;
  const e = parsed.data;
  const text = e.text.replace(MENTION, '').trim().slice(0, 20_000);
  if (!text) return undefined;
  return {
    thread: {
      team: parsedTeam.data,
      channel: e.channel,
      threadTs: e.thread_ts ?? e.ts,
    } satisfies SlackThread,
    message: { messageId: `${e.channel}:${e.ts}`, userId: e.user, text, ref: e.ts },
    channelType: e.channel_type,
    inThread: e.thread_ts !== undefined,
  };
}

/** An ephemeral reply to the clicker only. */
async function tell(respond: RespondFn, text: string): Promise<void> {
  await respond({ response_type: 'ephemeral', replace_original: false, text });
}

function parseButton(raw: string | undefined): GateButtonValue | undefined {
  try {
    const parsed = gateButtonValueSchema.safeParse(JSON.parse(raw ?? ''));
    return parsed.success && parseSlackSessionId(parsed.data.workflowId) ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function registerSlackListeners(
  app: App,
  sessions: ChatSessions,
  log: Logger,
  connect: (userId: string, provider: string) => { url: string; providerName: string } | undefined,
): void {
  // "Connect <provider>": each clicker gets their own sign-in link, privately.
  app.action<BlockAction<ButtonAction>>('gate_connect', async (args) => {
    await args.ack();
    const provider = (() => {
      try {
        return z
          .object({ provider: z.string().regex(/^[a-z][a-z0-9-]{0,31}$/) })
          .parse(JSON.parse(args.action.value ?? '')).provider;
      } catch {
        return undefined;
      }
    })();
    const link = provider ? connect(args.body.user.id, provider) : undefined;
    if (!link) return await tell(args.respond, 'That sign-in is not configured here; nothing was done.');
    await args.respond({
      response_type: 'ephemeral',
      replace_original: false,
      text: `Connect ${link.providerName}: ${link.url}`,
      blocks: connectLinkBlocks(link.providerName, link.url),
    });
  });
  // The link button opens the browser; Slack still sends the click, which needs only an ack.
  app.action('gate_connect_link', async ({ ack }) => await ack());

  app.event('app_mention', async ({ event, body }) => {
    const incoming = parseIncoming(event, body.team_id);
    if (!incoming) return;
    const { thread, message } = incoming;
    if (/^pending$/i.test(message.text)) {
      await sessions.repostPending(slackSessionWorkflowId(thread), message.userId).catch(() => {});
      return;
    }
    await sessions.start(slackSessionWorkflowId(thread), message);
    log.info('slack message accepted', {
      channel: thread.channel,
      threadTs: thread.threadTs,
      userId: message.userId,
    });
  });

  app.message(async ({ message: raw, body }) => {
    const incoming = parseIncoming(raw, (body as { team_id?: unknown }).team_id);
    if (!incoming) return;
    if (incoming.channelType === 'im')
      return await sessions.start(slackSessionWorkflowId(incoming.thread), incoming.message);
    // In channels the agent answers mentions (above) and threads it is already part of.
    if (incoming.inThread) await sessions.continue(slackSessionWorkflowId(incoming.thread), incoming.message);
  });

  const decideFromButton = async (
    args: SlackActionMiddlewareArgs<BlockAction<ButtonAction>>,
    extra: { scope?: 'session' | 'user' } = {},
  ) => {
    const value = parseButton(args.action.value);
    if (!value) {
      await args.ack();
      return await tell(args.respond, 'That button is not one of ours or is malformed; nothing was done.');
    }
    try {
      await sessions.decide(value.workflowId, {
        gateId: value.gateId,
        choice: value.choice,
        userId: args.body.user.id,
        ...extra,
      });
      await args.ack();
    } catch (error) {
      await args.ack();
      log.warn('slack click not recorded', { workflowId: value.workflowId, error: (error as Error).message });
      await tell(
        args.respond,
        'Your click could not be recorded right now (the conversation is unreachable). Please try again.',
      );
    }
  };

  app.action<BlockAction<ButtonAction>>('gate_approve', (args) => decideFromButton(args));
  app.action<BlockAction<ButtonAction>>('gate_always_session', (args) =>
    decideFromButton(args, { scope: 'session' }),
  );
  app.action<BlockAction<ButtonAction>>('gate_always_user', (args) =>
    decideFromButton(args, { scope: 'user' }),
  );

  app.action<BlockAction<ButtonAction>>('gate_deny', async (args) => {
    await args.ack();
    const value = parseButton(args.action.value);
    if (!value) return;
    await args.client.views.open({
      trigger_id: args.body.trigger_id,
      view: denyModal(JSON.stringify(value), 'this call'),
    });
  });

  app.action<BlockAction<ButtonAction>>('gate_edit', async (args) => {
    await args.ack();
    const value = parseButton(args.action.value);
    if (!value) return;
    const gate = await sessions.gate(value.workflowId, value.gateId).catch(() => undefined);
    if (!gate || gate.kind !== 'approval') {
      return await tell(
        args.respond,
        'This call is no longer open, or the agent is not answering right now; try again in a moment.',
      );
    }
    await args.client.views.open({
      trigger_id: args.body.trigger_id,
      view: editModal(JSON.stringify(value), gate),
    });
  });

  app.action<BlockAction<ButtonAction>>('gate_answer', async (args) => {
    await args.ack();
    const value = parseButton(args.action.value);
    if (!value) return;
    const gate = await sessions.gate(value.workflowId, value.gateId).catch(() => undefined);
    if (!gate || gate.kind !== 'question') {
      return await tell(
        args.respond,
        'This question is no longer open, or the agent is not answering right now; try again in a moment.',
      );
    }
    await args.client.views.open({
      trigger_id: args.body.trigger_id,
      view: answerModal(JSON.stringify(value), gate),
    });
  });

  const metadata = (args: SlackViewMiddlewareArgs<ViewSubmitAction>) =>
    parseButton(args.view.private_metadata);

  app.view<ViewSubmitAction>('gate_deny', async (args) => {
    const value = metadata(args);
    if (!value) return await args.ack();
    const reason = args.view.state.values.reason?.value?.value?.trim();
    await sessions.decide(value.workflowId, {
      gateId: value.gateId,
      choice: 'deny',
      userId: args.body.user.id,
      ...(reason ? { reason } : {}),
    });
    await args.ack();
  });

  app.view<ViewSubmitAction>('gate_edit', async (args) => {
    const value = metadata(args);
    if (!value) return await args.ack();
    const text = args.view.state.values.args?.value?.value ?? '';
    const parsed = z.record(z.string(), z.unknown()).safeParse(
      (() => {
        try {
          return JSON.parse(text);
        } catch {
          return undefined;
        }
      })(),
    );
    if (!parsed.success)
      return await args.ack({
        response_action: 'errors',
        errors: { args: 'Enter the arguments as a JSON object, e.g. {"command": "ls"}' },
      });
    await sessions.decide(value.workflowId, {
      gateId: value.gateId,
      choice: 'edit',
      args: parsed.data,
      userId: args.body.user.id,
    });
    await args.ack();
  });

  app.view<ViewSubmitAction>('gate_answer', async (args) => {
    const value = metadata(args);
    if (!value) return await args.ack();
    const answers = z.array(answerSchema).safeParse(readAnswers(args.view.state.values));
    if (!answers.success) return await args.ack({ response_action: 'errors', errors: {} });
    await sessions.answer(value.workflowId, {
      gateId: value.gateId,
      userId: args.body.user.id,
      answers: answers.data,
    });
    await args.ack();
  });

  app.command(/^\/agent/, async ({ command, ack, respond }) => {
    await ack();
    const [verb] = command.text.trim().split(/\s+/);
    if (verb !== 'pending') {
      await respond({
        response_type: 'ephemeral',
        text: 'Usage: `/agent pending` re-posts the approvals and questions waiting in this channel.',
      });
      return;
    }
    const waiting = await sessions.waitingWithPrefix(
      `session:slack:${command.team_id}:${command.channel_id}:`,
    );
    for (const workflowId of waiting)
      await sessions.repostPending(workflowId, command.user_id).catch(() => {});
    await respond({
      response_type: 'ephemeral',
      text: waiting.length
        ? `Re-posting what is waiting in ${waiting.length} conversation(s) here.`
        : 'Nothing is waiting for a decision in this channel.',
    });
  });
}
