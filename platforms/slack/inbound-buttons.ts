/**
 * Slack clicks that need no dialog: feedback on an answer, Connect, Stop, and Approve / Always. Each is
 * acknowledged and becomes a signal, accepted while no worker runs; a click that cannot be recorded is told
 * to the clicker only.
 */
import type { SlackActionMiddlewareArgs } from '@slack/bolt';
import { WorkflowNotFoundError } from '@temporalio/client';
import { z } from 'zod';
import { providerNameSchema } from '../../common/ids';
import { parseSlackSessionId, slackSessionWorkflowId } from './ids';
import { connectLinkBlocks, FEEDBACK_BLOCK_PREFIX } from './render';
import { sayRecordedIfNoWorker } from './recorded-notice';
import {
  parseButton,
  slackId,
  slackTs,
  tell,
  type ButtonArgs,
  type SlackListenerContext,
} from './inbound-context';

const ENDED = 'That conversation has ended (or never existed here); nothing changed.';
/** A feedback button click, as Slack sends it: the rating, the answer (block id) and where the message is. */
const feedbackClickSchema = z.object({
  action: z.object({ block_id: z.string().max(255), value: z.enum(['good', 'bad']) }),
  body: z.object({
    team: z.object({ id: slackId }),
    user: z.object({ id: z.string().regex(/^[UW][A-Z0-9]{0,31}$/) }),
    container: z.object({ channel_id: slackId, message_ts: slackTs, thread_ts: slackTs.optional() }),
  }),
});

/** A Connect button's value: the provider to sign in to. */
function parseConnectButton(raw: string | undefined): string | undefined {
  try {
    return z.object({ provider: providerNameSchema }).parse(JSON.parse(raw ?? '')).provider;
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

/** 👍 / 👎 under an answer in an assistant thread: recorded on that message, in its thread's session. */
export async function recordFeedback(
  ctx: SlackListenerContext,
  args: SlackActionMiddlewareArgs,
): Promise<void> {
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
    await ctx.sessions.rate(slackSessionWorkflowId(thread), {
      messageId: action.block_id.slice(FEEDBACK_BLOCK_PREFIX.length),
      userId: body.user.id,
      rating: action.value,
    });
  } catch (error) {
    ctx.log.warn('slack feedback not recorded', { error: (error as Error).message });
    await tell(
      args.respond,
      'Your feedback could not be recorded right now (the conversation is unreachable).',
    );
  }
}

/** "Connect <provider>": each clicker gets their own sign-in link, privately. */
export async function sendConnectLink(ctx: SlackListenerContext, args: ButtonArgs): Promise<void> {
  await args.ack();
  const provider = parseConnectButton(args.action.value);
  const link = provider ? ctx.connect(args.body.user.id, provider) : undefined;
  if (!link) return await tell(args.respond, 'That sign-in is not configured here; nothing was done.');
  await args.respond({
    response_type: 'ephemeral',
    replace_original: false,
    text: `Connect ${link.providerName}: ${link.url}`,
    blocks: connectLinkBlocks(link.providerName, link.url),
  });
}

/** Stop: a signal like a click, accepted while no worker runs; the workflow checks who may and tells the rest. */
export async function stopTurn(ctx: SlackListenerContext, args: ButtonArgs): Promise<void> {
  await args.ack();
  const workflowId = parseStopButton(args.action.value);
  if (!workflowId)
    return await tell(args.respond, 'That button is not one of ours or is malformed; nothing was done.');
  try {
    await ctx.sessions.stop(workflowId, args.body.user.id);
    await args.respond({ replace_original: true, text: 'Stop sent: this turn stops in a moment.' });
  } catch (error) {
    ctx.log.warn('slack stop not recorded', { workflowId, error: (error as Error).message });
    await tell(args.respond, 'Your Stop could not be recorded right now (the conversation is unreachable).');
  }
}

/** Approve, Always here, Always everywhere: the decision, signalled before the click is acknowledged. */
export async function decideFromButton(
  ctx: SlackListenerContext,
  args: ButtonArgs,
  extra: { scope?: 'session' | 'user' } = {},
): Promise<void> {
  const value = parseButton(args.action.value);
  if (!value) {
    await args.ack();
    return await tell(args.respond, 'That button is not one of ours or is malformed; nothing was done.');
  }
  try {
    await ctx.sessions.decide(value.workflowId, {
      gateId: value.gateId,
      choice: value.choice,
      userId: args.body.user.id,
      ...extra,
    });
    await args.ack();
    void sayRecordedIfNoWorker(
      ctx,
      { workflowId: value.workflowId, gateId: value.gateId, userId: args.body.user.id },
      (text) => tell(args.respond, text),
    );
  } catch (error) {
    await args.ack();
    // A conversation that has ended (ended by an operator, or a finished mission run's) takes no click: say so,
    // not "try again".
    if (error instanceof WorkflowNotFoundError) return await tell(args.respond, ENDED);
    ctx.log.warn('slack click not recorded', {
      workflowId: value.workflowId,
      error: (error as Error).message,
    });
    await tell(
      args.respond,
      'Your click could not be recorded right now (the conversation is unreachable). Please try again.',
    );
  }
}
