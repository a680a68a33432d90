/**
 * The Teams platform: the Bot Connector's activities at /teams/messages (messages and card clicks), verified as the
 * connector signs them. The worker answers through the connector's REST API (outbound.ts).
 */
import { getRequestListener } from '@hono/node-server';
import { Sessions } from '../../gateways/sessions';
import { personalConnect } from '../../gateways/oauth/links';
import type { GatewayDeps, NodePlatform } from '../../gateways/platform';
import { ConnectorAuth } from './auth';
import { teamsApp } from './inbound';
import { teamsVoice } from './cards';

/** Teams gives an invoke a few seconds: every Temporal call of a click fits well inside. */
const TEAMS_DEADLINE_MS = 2_500;

export function createTeamsPlatform(deps: GatewayDeps): NodePlatform | undefined {
  const teams = deps.config.teams;
  if (!teams) return undefined;
  const app = teamsApp({
    auth: new ConnectorAuth({ appId: teams.appId, openIdMetadataUrl: teams.openIdMetadataUrl }),
    sessions: new Sessions(deps.client, deps.config.temporal.taskQueue, 'teams', TEAMS_DEADLINE_MS),
    log: deps.log,
    connect: personalConnect(deps),
    voice: teamsVoice(deps.config.policy.users),
  });
  return { prefix: '/teams/', listener: getRequestListener(app.fetch) };
}
