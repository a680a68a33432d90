/** The platforms this gateway serves. */
import type { Hono } from 'hono';
import type { GatewayDeps, NodePlatform } from './platform';
import { createDiscordPlatform } from '../platforms/discord';
import { mountAudit } from './audit';
import { mountCodec } from './codec';
import { mountEmail } from './email';
import { mountMissions } from './missions';
import { mountOAuth } from './oauth';
import { createSlackPlatform } from '../platforms/slack';
import { createTeamsPlatform } from '../platforms/teams';
import { mountWeb } from './web';

export const platforms: { name: string; mount: (app: Hono, deps: GatewayDeps) => void }[] = [
  { name: 'web', mount: mountWeb },
  { name: 'oauth', mount: mountOAuth },
  { name: 'missions', mount: mountMissions },
  { name: 'codec', mount: mountCodec },
  { name: 'audit', mount: mountAudit },
  { name: 'email', mount: mountEmail },
];

/** Platforms whose SDK brings its own transport (Slack's Bolt: an HTTP receiver, or Socket Mode; Discord: interactions plus the discord.js connection). */
export const nodePlatforms: { name: string; create: (deps: GatewayDeps) => NodePlatform | undefined }[] = [
  { name: 'slack', create: createSlackPlatform },
  { name: 'discord', create: createDiscordPlatform },
  { name: 'teams', create: createTeamsPlatform },
];
