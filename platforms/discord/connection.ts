/** The discord.js gateway connection: receives messages (mentions, DMs, threads) and hands them on. */
import { ChannelType, Client, Events, GatewayIntentBits, Partials, type Message } from 'discord.js';
import type { Logger } from '../../infra/log';
import type { Sessions } from '../../gateways/sessions';
import { MESSAGE_NOT_TAKEN } from '../chat-text';
import { handleDiscordMessage, type IncomingDiscordMessage } from './messages';
import { DEFAULT_DISCORD_API } from './rest';

export function toIncoming(message: Message, botUserId: string | undefined): IncomingDiscordMessage {
  return {
    id: message.id,
    channelId: message.channelId,
    authorId: message.author.id,
    authorIsBot: message.author.bot,
    content: message.content,
    mentionsBot: botUserId ? message.mentions.users.has(botUserId) : false,
    inThread: message.channel.isThread(),
    isDirect: message.channel.type === ChannelType.DM,
  };
}

export function discordConnection(options: {
  botToken: string;
  apiUrl: string | undefined;
  sessions: Sessions;
  log: Logger;
}): { start(): Promise<void>; stop(): Promise<void> } {
  const { sessions, log } = options;
  const client = new Client({
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.DirectMessages,
      GatewayIntentBits.MessageContent,
    ],
    // DM channels are not cached before their first message.
    partials: [Partials.Channel],
    rest: { api: options.apiUrl ?? DEFAULT_DISCORD_API },
  });
  // One channel's messages are handled in the order Discord sent them: a plain message posted just before
  // the mention that starts a thread's conversation must not race past it into that conversation.
  const channels = new Map<string, Promise<void>>();
  client.on(Events.MessageCreate, (message) => {
    const handle = async () => {
      const outcome = await handleDiscordMessage(toIncoming(message, client.user?.id), sessions, log);
      if (outcome === 'not-taken')
        await message.reply({ content: MESSAGE_NOT_TAKEN, allowedMentions: { repliedUser: true } });
    };
    const previous = channels.get(message.channelId) ?? Promise.resolve();
    const next = previous
      .then(handle)
      .catch((error: Error) =>
        log.warn('discord message not delivered', { channelId: message.channelId, error: error.message }),
      )
      .finally(() => {
        if (channels.get(message.channelId) === next) channels.delete(message.channelId);
      });
    channels.set(message.channelId, next);
  });
  client.on(Events.Error, (error) => log.error('discord connection error', { error: error.message }));
  return {
    async start() {
      await client.login(options.botToken);
      log.info('discord gateway connected', { user: client.user?.tag });
    },
    async stop() {
      await client.destroy();
    },
  };
}
