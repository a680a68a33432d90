/**
 * Discord messages (from the gateway connection) -> signals. Independent of discord.js, so it is tested
 * with plain objects: the connection only turns a discord.js Message into an IncomingDiscordMessage.
 */
import type { Logger } from '../../infra/log';
import type { Sessions } from '../../gateways/sessions';
import { discordSessionWorkflowId } from './ids';

export interface IncomingDiscordMessage {
  id: string;
  channelId: string;
  authorId: string;
  authorIsBot: boolean;
  content: string;
  /** The bot was mentioned (a user mention, not @everyone). */
  mentionsBot: boolean;
  inThread: boolean;
  isDirect: boolean;
}

/** `not-taken`: Temporal did not accept it; Discord never resends, so the connection tells the sender. */
export type MessageOutcome = 'started' | 'continued' | 'pending' | 'ignored' | 'not-taken';

const MENTION = /<@!?\d{17,20}>/g;

export async function handleDiscordMessage(
  message: IncomingDiscordMessage,
  sessions: Sessions,
  log: Logger,
): Promise<MessageOutcome> {
  if (message.authorIsBot) return 'ignored';
  const text = message.content.replace(MENTION, '').trim().slice(0, 20_000);
  if (!text) return 'ignored';
  const workflowId = discordSessionWorkflowId(message.channelId);
  const signal = {
    messageId: `${message.channelId}:${message.id}`,
    userId: message.authorId,
    text,
    ref: message.id,
  };
  if ((message.mentionsBot || message.isDirect) && /^pending$/i.test(text)) {
    await sessions.repostPending(workflowId, message.authorId).catch(() => {});
    return 'pending';
  }
  try {
    // A mention or a DM may start a conversation; in a thread the agent is part of, every message counts.
    if (message.mentionsBot || message.isDirect) {
      await sessions.start(workflowId, signal);
      log.info('discord message accepted', { workflowId, userId: message.authorId });
      return 'started';
    }
    if (message.inThread && (await sessions.continue(workflowId, signal))) return 'continued';
    return 'ignored';
  } catch (error) {
    log.warn('discord message not accepted', { workflowId, error: (error as Error).message });
    return 'not-taken';
  }
}
