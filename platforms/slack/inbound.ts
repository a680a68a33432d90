/**
 * Slack inbound: Bolt listeners that parse, authenticate (Bolt verifies the signing secret) and signal.
 * Every action and view listener acknowledges within Slack's 3 seconds, also while no worker runs:
 * signals need only the Temporal server. A message event is answered only once its signal is accepted
 * (otherwise Slack retries it, or the sender is told). Nothing pending is kept here.
 */
import type {
  AllMiddlewareArgs,
  App,
  RespondFn,
  BlockAction,
  ButtonAction,
  SlackActionMiddlewareArgs,
  SlackViewMiddlewareArgs,
  ViewSubmitAction,
} from '@slack/bolt';
import type { View } from '@slack/types';
import { z } from 'zod';
import { AgentError, ErrorCode } from '../../common/errors';
import type { Logger } from '../../infra/log';
import { providerNameSchema, slackChannelSessionPrefix } from '../../common/ids';
import { answerSchema, type Answer } from '../../common/tools/ask-user';
import {
  gateButtonValueSchema,
  type GateButtonValue,
  type UserMessage,
} from '../../workflows/session/contract';
import { parseSlackSessionId, slackSessionWorkflowId, type SlackThread } from './ids';
import { connectLinkBlocks, denyModal, editModal, FEEDBACK_BLOCK_PREFIX, SLACK_ARGS_LIMIT } from './render';
import { argsTooLarge, editableArgs } from '../../gateways/dialog-args';
import { answerErrors, answerModal, readAnswers } from './render-question';
import type { Sessions } from '../../gateways/sessions';
import { MESSAGE_NOT_TAKEN } from '../chat-text';
import { slackAssistant, type SuggestedPrompt } from './assistant';

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

/** A feedback button click, as Slack sends it: the rating, the answer (block id) and where the message is. */
const feedbackClickSchema = z.object({
  action: z.object({ block_id: z.string().max(255), value: z.enum(['good', 'bad']) }),
  body: z.object({
    team: z.object({ id }),
    user: z.object({ id: z.string().regex(/^[UW][A-Z0-9]{0,31}$/) }),
    container: z.object({ channel_id: id, message_ts: ts, thread_ts: ts.optional() }),
  }),
});

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

/** A Stop button's value: the address of a Slack conversation, nothing else. */
function parseStopButton(raw: string | undefined): string | undefined {
  try {
    const parsed = z.strictObject({ workflowId: z.string().max(300) }).safeParse(JSON.parse(raw ?? ''));
    return parsed.success && parseSlackSessionId(parsed.data.workflowId) ? parsed.data.workflowId : undefined;
  } catch {
    return undefined;
  }
}

/** A dialog must open within Slack's 3 s (trigger ids expire); the memo read is bounded well inside. */
const DIALOG_BUDGET_MS = 800;

/** A submitted answer too long or malformed for the answer schema: the reason under the field it came from. */
function answerShapeErrors(raw: readonly Answer[], error: z.ZodError): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const issue of error.issues) {
    const answer = typeof issue.path[0] === 'number' ? raw[issue.path[0]] : undefined;
    if (answer) errors[`${issue.path[1] === 'custom' ? 'qc' : 'q'}:${answer.question}`] = issue.message;
  }
  return errors;
}

/** Slack's Events API retries a failed delivery three times (after about 0 s, 1 min and 5 min). */
const LAST_SLACK_RETRY = 3;

export function registerSlackListeners(
  app: App,
  sessions: Sessions,
  log: Logger,
  connect: (userId: string, provider: string) => { url: string; providerName: string } | undefined,
  /** Over HTTP, a listener's error makes the answer a 500 (Slack retries); Socket Mode acks events first. */
  slackRetries = true,
  /** SLACK_ASSISTANT=on: the assistant container's threads, with these suggested prompts (assistant.ts). */
  assistant?: { prompts: readonly SuggestedPrompt[] },
): void {
  /**
   * A message Temporal did not take must not be acknowledged and lost. While Slack will retry, the listener
   * throws (the gateway answers 500; the retry carries the same message id, which the workflow takes once);
   * after the last retry, or in Socket Mode, the sender is told in the thread to send it again.
   */
  const notAccepted = async (
    thread: SlackThread,
    userId: string,
    retryNum: number | undefined,
    client: App['client'],
    error: unknown,
  ): Promise<void> => {
    const reason = (error as Error).message;
    log.warn('slack message not accepted', {
      channel: thread.channel,
      threadTs: thread.threadTs,
      retryNum,
      error: reason,
    });
    if (slackRetries && (retryNum ?? 0) < LAST_SLACK_RETRY)
      throw new AgentError(
        ErrorCode.TemporalUnreachable,
        `Slack message in ${thread.channel} not accepted (${reason}); answering 500 so Slack delivers it again`,
        { cause: error },
      );
    await client.chat
      .postMessage({
        channel: thread.channel,
        thread_ts: thread.threadTs,
        text: `<@${userId}> ${MESSAGE_NOT_TAKEN}`,
      })
      .catch((postError: Error) => log.warn('slack notice not posted', { error: postError.message }));
  };
  const take = async (
    incoming: { thread: SlackThread; message: UserMessage },
    args: { context: { retryNum?: number | undefined }; client: App['client'] },
    signal: () => Promise<unknown>,
  ): Promise<void> => {
    try {
      await signal();
    } catch (error) {
      await notAccepted(incoming.thread, incoming.message.userId, args.context.retryNum, args.client, error);
    }
  };

  // 👍 / 👎 under an answer in an assistant thread: recorded on that message, in its thread's session.
  app.action('answer_feedback', async (args) => {
    await args.ack();
    const parsed = feedbackClickSchema.safeParse({ action: args.action, body: args.body });
    if (!parsed.success || !parsed.data.action.block_id.startsWith(FEEDBACK_BLOCK_PREFIX)) return;
    const { action, body } = parsed.data;
    const thread = {
      team: body.team.id,
      channel: body.container.channel_id,
      threadTs: body.container.thread_ts ?? body.container.message_ts,
    };
    try {
      await sessions.rate(slackSessionWorkflowId(thread), {
        messageId: action.block_id.slice(FEEDBACK_BLOCK_PREFIX.length),
        userId: body.user.id,
        rating: action.value,
      });
    } catch (error) {
      log.warn('slack feedback not recorded', { error: (error as Error).message });
      await tell(
        args.respond,
        'Your feedback could not be recorded right now (the conversation is unreachable).',
      );
    }
  });

  // "Connect <provider>": each clicker gets their own sign-in link, privately.
  app.action<BlockAction<ButtonAction>>('gate_connect', async (args) => {
    await args.ack();
    const provider = (() => {
      try {
        return z.object({ provider: providerNameSchema }).parse(JSON.parse(args.action.value ?? '')).provider;
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

  app.event('app_mention', async (args) => {
    const incoming = parseIncoming(args.event, args.body.team_id);
    if (!incoming) return;
    const { thread, message } = incoming;
    if (/^pending$/i.test(message.text)) {
      await sessions.repostPending(slackSessionWorkflowId(thread), message.userId).catch(() => {});
      return;
    }
    await take(incoming, args, async () => {
      await sessions.start(slackSessionWorkflowId(thread), message);
      log.info('slack message accepted', {
        channel: thread.channel,
        threadTs: thread.threadTs,
        userId: message.userId,
      });
    });
  });

  if (assistant)
    app.assistant(
      slackAssistant({
        prompts: assistant.prompts,
        log,
        onMessage: async (event, team, client, retryNum) => {
          const incoming = parseIncoming(event, team);
          if (!incoming) return undefined;
          let taken = false;
          await take(incoming, { context: { retryNum }, client: client as App['client'] }, async () => {
            await sessions.start(slackSessionWorkflowId(incoming.thread), incoming.message);
            taken = true;
          });
          return taken ? incoming.message.text : undefined;
        },
      }),
    );

  app.message(async (args) => {
    const incoming = parseIncoming(args.message, (args.body as { team_id?: unknown }).team_id);
    if (!incoming) return;
    const workflowId = slackSessionWorkflowId(incoming.thread);
    if (incoming.channelType === 'im')
      return await take(incoming, args, () => sessions.start(workflowId, incoming.message));
    // In channels the agent answers mentions (above) and threads it is already part of.
    if (incoming.inThread) await take(incoming, args, () => sessions.continue(workflowId, incoming.message));
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

  // Stop: a signal like a click, accepted while no worker runs; the workflow checks who may and tells the rest.
  app.action<BlockAction<ButtonAction>>('turn_stop', async (args) => {
    await args.ack();
    const workflowId = parseStopButton(args.action.value);
    if (!workflowId)
      return await tell(args.respond, 'That button is not one of ours or is malformed; nothing was done.');
    try {
      await sessions.stop(workflowId, args.body.user.id);
      await args.respond({ replace_original: true, text: 'Stop sent: this turn stops in a moment.' });
    } catch (error) {
      log.warn('slack stop not recorded', { workflowId, error: (error as Error).message });
      await tell(
        args.respond,
        'Your Stop could not be recorded right now (the conversation is unreachable).',
      );
    }
  });

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

  /**
   * Edit & approve… and Answer… open their dialogs from the gate's memo (the server answers with no worker
   * running), so they work during a deploy; the submission is a signal the workflow judges when it runs.
   */
  const openDialog = async (
    args: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs,
    kind: 'approval' | 'question',
  ) => {
    await args.ack();
    const value = parseButton(args.action.value);
    if (!value) return;
    const gate = await sessions
      .gatePrompt(value.workflowId, value.gateId, DIALOG_BUDGET_MS)
      .catch((error: Error) => {
        log.warn('slack dialog not opened', { workflowId: value.workflowId, error: error.message });
        return undefined;
      });
    if (gate?.kind !== kind)
      return await tell(
        args.respond,
        `This ${kind === 'approval' ? 'call' : 'question'} is not open here, or the agent's server cannot be reached right now; try again in a moment.`,
      );
    if (gate.kind === 'question') return await openView(args, answerModal(JSON.stringify(value), gate));
    const text = editableArgs(gate.args, SLACK_ARGS_LIMIT);
    if (text === undefined)
      return await tell(args.respond, argsTooLarge(gate.toolName, gate.argsChars, SLACK_ARGS_LIMIT));
    await openView(args, editModal(JSON.stringify(value), { toolName: gate.toolName, args: text }));
  };
  const openView = async (
    args: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs,
    view: View,
  ) => {
    await args.client.views.open({ trigger_id: args.body.trigger_id, view });
  };

  app.action<BlockAction<ButtonAction>>('gate_edit', (args) => openDialog(args, 'approval'));
  app.action<BlockAction<ButtonAction>>('gate_answer', (args) => openDialog(args, 'question'));

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
    const raw = readAnswers(args.view.state.values);
    const answers = z.array(answerSchema).safeParse(raw);
    if (!answers.success)
      return await args.ack({ response_action: 'errors', errors: answerShapeErrors(raw, answers.error) });
    // Checked here when the questions can be read (no worker needed), so the reason shows in the form.
    const gate = await sessions
      .gatePrompt(value.workflowId, value.gateId, DIALOG_BUDGET_MS)
      .catch(() => undefined);
    const errors = gate?.kind === 'question' ? answerErrors(gate.questions, answers.data) : {};
    if (Object.keys(errors).length) return await args.ack({ response_action: 'errors', errors });
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
    const waiting = await sessions
      .waitingWithPrefix(slackChannelSessionPrefix(command.team_id, command.channel_id))
      .catch(() => undefined);
    if (!waiting) {
      await respond({
        response_type: 'ephemeral',
        text: "The agent's server cannot be reached right now; try `/agent pending` again in a moment.",
      });
      return;
    }
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
