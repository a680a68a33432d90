/**
 * The `deliver` activity: hands a session's outbound event to its platform's outbound adapter. A long answer
 * posted in parts records each part in the activity's heartbeat details, so a retry after part 2 of 4 failed
 * goes on with part 3 (the details of the last attempt reach the next one, as Temporal does for resumable
 * activities).
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type { AppConfig } from '../infra/config';
import { DiscordOutbound } from '../platforms/discord/outbound';
import { SlackOutbound } from '../platforms/slack/outbound';
import type {
  DeliveryRequest,
  DeliveryResult,
  OutboundEvent,
  PartProgress,
} from '../workflows/session/outbound';

interface Outbound {
  deliver(sessionId: string, event: OutboundEvent, progress: PartProgress): Promise<DeliveryResult>;
}

const progressSchema = z.object({ partsPosted: z.number().int().nonnegative() });

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
    const context = Context.current();
    const earlier = progressSchema.safeParse(context.info.heartbeatDetails);
    const { workflowExecution, activityId } = context.info;
    return await outbound.deliver(sessionId, event, {
      from: earlier.success ? earlier.data.partsPosted : 0,
      onPosted: (parts) => context.heartbeat({ partsPosted: parts }),
      // Activity ids restart in every run, so the run id makes the key unique to this delivery.
      key: `${workflowExecution?.workflowId ?? sessionId}/${workflowExecution?.runId ?? ''}/${activityId}`,
    });
  };
}
