/** Workflow ids built from the conversation's own coordinates, so no lookup table exists anywhere. */
import { z } from 'zod';
import { sharedSchemas } from './shared-schemas';

const schemas = sharedSchemas('ids', () => {
  const providerNamePattern = /^[a-z][a-z0-9-]{0,31}$/;
  return {
    /** A web session id: chosen by the page (a UUID), restricted so it is safe in URLs and workflow ids. */
    webSessionId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a session id is 1-64 letters, digits, - or _'),
    /** A user id as gateways pass it: a platform user id or a web user name. */
    userId: z.string().regex(/^[A-Za-z0-9._@:-]{1,128}$/, 'a user id is 1-128 letters, digits or . _ @ : -'),
    providerNamePattern,
    providerName: z
      .string()
      .regex(providerNamePattern, 'a provider name is 1-32 lower-case letters, digits or -, e.g. "github"'),
  };
});
export const webSessionIdSchema = schemas.webSessionId;
export const userIdSchema = schemas.userId;
/** A credential provider's name (policy `providers`, tool `auth`, sign-in links): one pattern everywhere. */
export const PROVIDER_NAME = schemas.providerNamePattern;
export const providerNameSchema = schemas.providerName;

// Workflow ids: every prefix is spelled here and nowhere else.
export const webSessionWorkflowId = (sessionId: string): string => `session:web:${sessionId}`;
export const discordSessionWorkflowId = (channelId: string): string => `session:discord:${channelId}`;
/** Every Slack session of one channel starts with this (the thread's ts follows). */
export const slackChannelSessionPrefix = (team: string, channel: string): string =>
  `session:slack:${team}:${channel}:`;
export const slackSessionWorkflowIdOf = (team: string, channel: string, threadTs: string): string =>
  `${slackChannelSessionPrefix(team, channel)}${threadTs}`;
export const missionWorkflowId = (missionId: string): string => `mission:${missionId}`;
/** Every run of one mission starts with this (the run's number follows). */
export const missionRunPrefix = (missionId: string): string => `mission-run:${missionId}:`;
export const missionRunWorkflowId = (missionId: string, n: number): string =>
  `${missionRunPrefix(missionId)}${n}`;
export const userWorkflowId = (userId: string): string => `user:${userId}`;
/** One owner's missions (names unique per owner): no workflow holds every mission of the organization. */
export const missionDirectoryId = (ownerId: string): string => `mission-directory:${ownerId}`;

export function temporalUiLink(
  uiUrl: string | undefined,
  namespace: string,
  workflowId: string,
): string | undefined {
  if (!uiUrl) return undefined;
  return `${uiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
