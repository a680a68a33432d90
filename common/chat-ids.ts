/**
 * The shapes of chat platform user ids, and where a decision by an id was made. Web identities are never shaped like
 * a chat id (common/identities.ts makes sure), so the id alone says the channel. Pure: the web page bundles it.
 */
export const SLACK_USER_ID = /^[UW][A-Z0-9]{6,}$/;
export const DISCORD_USER_ID = /^\d{5,}$/;
/** A Teams person as the runtime names them: `teams:` and their Microsoft Entra object id. */
export const TEAMS_USER_ID = /^teams:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The runtime's id of a Teams person, from their Entra object id (as Teams sends it, or as the policy lists it). */
export const teamsUserId = (aadObjectId: string): string => `teams:${aadObjectId.toLowerCase()}`;

/** Where a decision was made, from the id it was made as (the audit's `via`). */
export type DecidedVia = 'web' | 'slack' | 'discord' | 'teams' | 'agentctl' | 'workflow';

export function decidedVia(userId: string): DecidedVia {
  if (userId.startsWith('operator:')) return 'agentctl';
  if (SLACK_USER_ID.test(userId)) return 'slack';
  if (DISCORD_USER_ID.test(userId)) return 'discord';
  if (TEAMS_USER_ID.test(userId)) return 'teams';
  return 'web';
}

const WHERE: Record<DecidedVia, string> = {
  agentctl: 'with agentctl',
  slack: 'in Slack',
  discord: 'in Discord',
  teams: 'in Teams',
  web: 'on the web',
  workflow: 'by the workflow',
};

/** "in Slack", "in Discord", "on the web" (the page, AG-UI, A2A) or "with agentctl" (an operator's `operator:` id). */
export function whereDecided(userId: string): string {
  return WHERE[decidedVia(userId)];
}
