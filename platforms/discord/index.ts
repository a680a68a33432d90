/**
 * The Discord platform: interactions (slash commands, buttons, menus, modals) over HTTP at
 * /discord/interactions, and messages over the discord.js gateway connection (DISCORD_GATEWAY=off turns
 * the connection off, e.g. for interactions-only installs and tests).
 */
import { getRequestListener } from '@hono/node-server';
import { Sessions } from '../../gateways/sessions';
import { personalConnect } from '../../gateways/oauth/links';
import type { GatewayDeps, NodePlatform } from '../../gateways/platform';
import { discordConnection } from './connection';
import { discordInteractionsApp, SIGNAL_BUDGET_MS } from './interactions';
import { LateClickOutcome } from './late-click-outcome';
import { discordRest } from './rest';

export function createDiscordPlatform(deps: GatewayDeps): NodePlatform | undefined {
  const discord = deps.config.discord;
  if (!discord) return undefined;
  if (!discord.publicKey || !/^[0-9a-f]{64}$/i.test(discord.publicKey)) {
    throw new Error(
      'DISCORD_PUBLIC_KEY is missing or not 64 hex characters: copy the "Public Key" from your Discord application\'s "General Information" page (or unset DISCORD_BOT_TOKEN to turn Discord off)',
    );
  }
  const sessions = new Sessions(deps.client, deps.config.temporal.taskQueue, 'discord', SIGNAL_BUDGET_MS);
  const lateOutcomes = new LateClickOutcome({
    rest: discordRest({ botToken: discord.botToken, apiUrl: discord.apiUrl }),
    sessions,
    log: deps.log,
  });
  const app = discordInteractionsApp({
    publicKey: discord.publicKey,
    sessions,
    log: deps.log,
    connect: personalConnect(deps),
    lateOutcomes,
  });
  const connection = discord.gateway
    ? discordConnection({ botToken: discord.botToken, apiUrl: discord.apiUrl, sessions, log: deps.log })
    : undefined;
  return {
    prefix: '/discord/',
    listener: getRequestListener(app.fetch),
    ...(connection ? { start: () => connection.start() } : {}),
    stop: async () => {
      lateOutcomes.stop();
      await connection?.stop();
    },
  };
}
