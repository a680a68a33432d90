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

/**
 * The surfaces a gateway takes decisions on, told with each decision (the signal's origin): the web chat and its
 * "Needs you", Slack, Discord, Teams, the mail page, AG-UI and A2A clients.
 */
export const DECISION_SURFACES = ['web', 'slack', 'discord', 'teams', 'email', 'agui', 'a2a'] as const;
export type DecisionSurface = (typeof DECISION_SURFACES)[number];
export const isDecisionSurface = (name: string): name is DecisionSurface =>
  (DECISION_SURFACES as readonly string[]).includes(name);

/**
 * Where a decision was made (the audit's `via`): the surface the gateway told, else read from the id it was made as
 * (decisions from before surfaces were told, an operator's, the workflow's own).
 */
export type DecidedVia = DecisionSurface | 'agentctl' | 'workflow';

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
  email: 'by e-mail',
  agui: 'over AG-UI',
  a2a: 'over A2A',
  workflow: 'by the workflow',
};

/**
 * "in Slack", "in Discord", "on the web", "by e-mail", … as the gateway told it (`via`), else from the id: "with
 * agentctl" for an operator's `operator:` id.
 */
export function whereDecided(userId: string, via?: DecidedVia): string {
  return WHERE[via ?? decidedVia(userId)];
}
