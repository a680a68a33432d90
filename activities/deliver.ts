/** The `deliver` activity: hands a session's outbound event to its platform's outbound adapter. */
import { ApplicationFailure } from '@temporalio/common';
import type { AppConfig } from '../common/config';
import { DiscordOutbound } from '../gateways/discord/outbound';
import { SlackOutbound } from '../gateways/slack/outbound';
import type { DeliveryRequest, DeliveryResult, OutboundEvent } from '../workflows/session/outbound';

interface Outbound {
  deliver(sessionId: string, event: OutboundEvent): Promise<DeliveryResult>;
}

export function createDeliver(config: AppConfig): (request: DeliveryRequest) => Promise<DeliveryResult> {
  const outbounds: Record<string, Outbound | undefined> = {
    slack: config.slack
      ? new SlackOutbound({ botToken: config.slack.botToken, apiUrl: config.slack.apiUrl })
      : undefined,
    discord: config.discord
      ? new DiscordOutbound({ botToken: config.discord.botToken, apiUrl: config.discord.apiUrl })
      : undefined,
  };
  return async ({ sessionId, event }) => {
    const platform = /^session:([a-z]+):/.exec(sessionId)?.[1] ?? '';
    const outbound = outbounds[platform];
    if (!outbound) {
      throw ApplicationFailure.nonRetryable(
        `no outbound for ${platform || sessionId}: is the platform configured on this worker (e.g. SLACK_BOT_TOKEN, DISCORD_BOT_TOKEN)?`,
        'PlatformNotConfigured',
      );
    }
    return await outbound.deliver(sessionId, event);
  };
}
