/**
 * Slack messages into sessions: mentions, DMs, threads the agent is part of, and the assistant container's
 * threads. A message is answered only once its signal is accepted (otherwise Slack retries it, or the sender
 * is told).
 */
import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { AgentError, ErrorCode } from '../../common/errors';
import type { UserMessage } from '../../workflows/session/contract';
import { MESSAGE_NOT_TAKEN } from '../chat-text';
import { slackSessionWorkflowId, type SlackThread } from './ids';
import { slackId, slackTs, type SlackListenerContext } from './inbound-context';

const MENTION = /<@[A-Z0-9]+>/g;

/** A person's message event; bot messages, edits and other subtypes do not parse and are ignored. */
const incomingMessageSchema = z.object({
  user: z.string().regex(/^[UW][A-Z0-9]{0,31}$/),
  text: z.string().max(40_000),
  ts: slackTs,
  thread_ts: slackTs.optional(),
  channel: slackId,
  channel_type: z.string().optional(),
  subtype: z.never().optional(),
  bot_id: z.never().optional(),
});

/** Parses an event into its thread and the user message it carries; anything malformed gives undefined. */
function parseIncoming(event: unknown, team: unknown) {
  const parsedTeam = slackId.safeParse(team);
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

/** Slack's Events API retries a failed delivery three times (after about 0 s, 1 min and 5 min). */
const LAST_SLACK_RETRY = 3;

/**
 * A message Temporal did not take must not be acknowledged and lost. While Slack will retry, the listener
 * throws (the gateway answers 500; the retry carries the same message id, which the workflow takes once);
 * after the last retry, or in Socket Mode, the sender is told in the thread to send it again.
 */
async function notAccepted(
  ctx: SlackListenerContext,
  thread: SlackThread,
  userId: string,
  retryNum: number | undefined,
  client: App['client'],
  error: unknown,
): Promise<void> {
  const reason = (error as Error).message;
  ctx.log.warn('slack message not accepted', {
    channel: thread.channel,
    threadTs: thread.threadTs,
    retryNum,
    error: reason,
  });
  if (ctx.slackRetries && (retryNum ?? 0) < LAST_SLACK_RETRY)
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
    .catch((postError: Error) => ctx.log.warn('slack notice not posted', { error: postError.message }));
}

async function take(
  ctx: SlackListenerContext,
  incoming: { thread: SlackThread; message: UserMessage },
  args: { context: { retryNum?: number | undefined }; client: App['client'] },
  signal: () => Promise<unknown>,
): Promise<void> {
  try {
    await signal();
  } catch (error) {
    await notAccepted(
      ctx,
      incoming.thread,
      incoming.message.userId,
      args.context.retryNum,
      args.client,
      error,
    );
  }
}

/** A mention starts (or continues) the thread's session; a bare "pending" re-posts what waits there. */
export async function takeMention(
  ctx: SlackListenerContext,
  args: SlackEventMiddlewareArgs<'app_mention'> & AllMiddlewareArgs,
): Promise<void> {
  const { sessions, log } = ctx;
  const incoming = parseIncoming(args.event, args.body.team_id);
  if (!incoming) return;
  const { thread, message } = incoming;
  if (/^pending$/i.test(message.text)) {
    await sessions.repostPending(slackSessionWorkflowId(thread), message.userId).catch(() => {});
    return;
  }
  await take(ctx, incoming, args, async () => {
    await sessions.start(slackSessionWorkflowId(thread), message);
    log.info('slack message accepted', {
      channel: thread.channel,
      threadTs: thread.threadTs,
      userId: message.userId,
    });
  });
}

/** An assistant thread's message (assistant.ts): its text once it became a session message, else undefined. */
export async function takeAssistantMessage(
  ctx: SlackListenerContext,
  event: unknown,
  team: unknown,
  client: unknown,
  retryNum: number | undefined,
): Promise<string | undefined> {
  const incoming = parseIncoming(event, team);
  if (!incoming) return undefined;
  let taken = false;
  await take(ctx, incoming, { context: { retryNum }, client: client as App['client'] }, async () => {
    await ctx.sessions.start(slackSessionWorkflowId(incoming.thread), incoming.message);
    taken = true;
  });
  return taken ? incoming.message.text : undefined;
}

/** A DM starts (or continues) its session; in channels only threads the agent is part of continue. */
export async function takeMessage(
  ctx: SlackListenerContext,
  args: SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs,
): Promise<void> {
  const { sessions } = ctx;
  const incoming = parseIncoming(args.message, (args.body as { team_id?: unknown }).team_id);
  if (!incoming) return;
  const workflowId = slackSessionWorkflowId(incoming.thread);
  if (incoming.channelType === 'im')
    return await take(ctx, incoming, args, () => sessions.start(workflowId, incoming.message));
  // In channels the agent answers mentions (takeMention) and threads it is already part of.
  if (incoming.inThread)
    await take(ctx, incoming, args, () => sessions.continue(workflowId, incoming.message));
}
