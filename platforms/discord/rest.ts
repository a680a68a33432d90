/** The bot-token REST client; @discordjs/rest queues per route and honours 429 retry-after on its own. */
import { REST } from '@discordjs/rest';

export const DEFAULT_DISCORD_API = 'https://discord.com/api';

export function discordRest(options: { botToken: string; apiUrl: string | undefined }): REST {
  return new REST({
    version: '10',
    api: options.apiUrl ?? DEFAULT_DISCORD_API,
    retries: 3,
    timeout: 15_000,
  }).setToken(options.botToken);
}
