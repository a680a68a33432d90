/**
 * The `deliver` activity: hands a session's outbound event to its platform's outbound adapter. A long answer
 * posted in parts records each part in the activity's heartbeat details, so a retry after part 2 of 4 failed
 * goes on with part 3 (the details of the last attempt reach the next one, as Temporal does for resumable
 * activities).
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type { StreamContext } from '../common/stream-context';
import type { AppConfig } from '../infra/config';
import type {
  DeliveryRequest,
  DeliveryResult,
  OutboundEvent,
  PartProgress,
} from '../workflows/session/outbound';

interface Outbound extends ChatStreamer {
  deliver(sessionId: string, event: OutboundEvent, progress: PartProgress): Promise<DeliveryResult>;
}

/** Streamed answers in a chat: the text so far posted once, then edited in place (the final message replaces it). */
export interface ChatStreamer {
  /** How much of the text the streamed message shows: past that, edits would change nothing a reader sees. */
  readonly streamChars: number;
  /** How often the platform's rate limits allow changing the streamed message `ref` (before it exists: undefined). */
  streamEditEveryMs(ref: string | undefined): number;
  /**
   * `context`: who asked, and the turn's tool steps (Slack's streaming messages show them as a plan); `owner`:
   * the activity attempt writing it (only it may append to a streaming message it started).
   */
  streamPost(sessionId: string, text: string, context: StreamContext, owner: string): Promise<string>;
  /** `final`: the text as it stays (a stopped or failed call's), without the sign that more follows. */
  streamEdit(
    sessionId: string,
    ref: string,
    text: string,
    options: { final: boolean; owner: string },
  ): Promise<void>;
  /** The whole answer is written: the reference its final message takes the place of (default: `ref`). Never throws. */
  streamDone?(sessionId: string, ref: string, text: string, owner: string): Promise<string>;
  /** The attempt was given up by the server (a newer one may write): what only it may close is closed. */
  streamAbandon?(sessionId: string, ref: string, owner: string): Promise<void>;
}

/** The first call's promise, shared by every later call. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

const progressSchema = z.object({ partsPosted: z.number().int().nonnegative() });

/** The platform adapter of a Slack or Discord session, when this worker is configured for that platform. */
export type OutboundFor = (sessionId: string) => Promise<Outbound | undefined>;

export function createOutbounds(
  config: AppConfig,
  warn: (message: string, fields: Record<string, unknown>) => void = () => {},
): OutboundFor {
  // A platform's client and renderer are loaded only on a worker configured for it, when it first delivers
  // (Discord's REST client and Slack's markdown converter are 0.3 s of a worker's start otherwise).
  const { slack, discord, teams } = config;
  const outbounds: Record<string, (() => Promise<Outbound>) | undefined> = {
    slack: slack
      ? once(async () => {
          const { SlackOutbound } = await import('../platforms/slack/outbound.js');
          return new SlackOutbound({
            botToken: slack.botToken,
            apiUrl: slack.apiUrl,
            assistant: slack.assistant,
            linkPreviews: config.policy.linkPreviews.slack,
            warn,
          });
        })
      : undefined,
    discord: discord
      ? once(async () => {
          const { DiscordOutbound } = await import('../platforms/discord/outbound.js');
          return new DiscordOutbound({
            botToken: discord.botToken,
            apiUrl: discord.apiUrl,
            linkPreviews: config.policy.linkPreviews.discord,
          });
        })
      : undefined,
    teams: teams
      ? once(async () => {
          const { TeamsOutbound } = await import('../platforms/teams/outbound.js');
          return new TeamsOutbound({
            appId: teams.appId,
            appPassword: teams.appPassword,
            tokenUrl: teams.tokenUrl,
            users: config.policy.users,
          });
        })
      : undefined,
  };
  return async (sessionId) => await outbounds[/^session:([a-z]+):/.exec(sessionId)?.[1] ?? '']?.();
}

export function createDeliver(
  outboundFor: OutboundFor,
): (request: DeliveryRequest) => Promise<DeliveryResult> {
  return async ({ sessionId, event }) => {
    const platform = /^session:([a-z]+):/.exec(sessionId)?.[1] ?? '';
    const outbound = await outboundFor(sessionId);
    if (!outbound) {
      throw ApplicationFailure.nonRetryable(
        `no outbound for ${platform || sessionId}: is the platform configured on this worker (e.g. SLACK_BOT_TOKEN, DISCORD_BOT_TOKEN, TEAMS_APP_ID)?`,
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
