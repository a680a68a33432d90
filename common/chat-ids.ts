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

/** "in Slack", "in Discord", "on the web" (the page, AG-UI, A2A) or "with agentctl" (an operator's `operator:` id). */
export function whereDecided(userId: string): string {
  if (userId.startsWith('operator:')) return 'with agentctl';
  if (SLACK_USER_ID.test(userId)) return 'in Slack';
  if (DISCORD_USER_ID.test(userId)) return 'in Discord';
  if (TEAMS_USER_ID.test(userId)) return 'in Teams';
  return 'on the web';
}
