/**
 * Discord coordinates <-> session workflow ids, and the compact `custom_id` of components and modals.
 *
 * One channel or thread (or DM channel) is one session: `session:discord:<channel id>`. A `custom_id`
 * holds at most 100 characters, so it carries only what a click needs: an action code, the session's
 * channel snowflake, the gate id and (for a question's select menu) the question's index. It is parsed
 * with a strict pattern; anything else is refused as "not ours".
 */
import { discordSessionWorkflowId, PROVIDER_NAME } from '../../common/ids';

export { discordSessionWorkflowId };

const SNOWFLAKE = /^\d{17,20}$/;

export function parseDiscordSessionId(workflowId: string): string | undefined {
  const match = /^session:discord:(\d{17,20})$/.exec(workflowId);
  return match?.[1];
}

export const isSnowflake = (value: unknown): value is string =>
  typeof value === 'string' && SNOWFLAKE.test(value);

/** What each component or modal does. Two letters keep ids short. */
export const ACTIONS = {
  approve: 'ga',
  deny: 'gd',
  alwaysHere: 'gs',
  alwaysEverywhere: 'gu',
  edit: 'ge',
  /** A question's select menu (carries the question index). */
  select: 'qs',
  /** "Other…" / "Answer in words…": opens the answers modal. */
  other: 'qo',
  /** Submit the answers picked so far (gates with optional questions). */
  submit: 'qx',
  /** "Connect <provider>": answered with the clicker's personal sign-in link (carries the provider). */
  connect: 'cc',
  denyModal: 'md',
  editModal: 'me',
  answerModal: 'mo',
} as const;
export type DiscordAction = keyof typeof ACTIONS;

const BY_CODE = new Map<string, DiscordAction>(
  Object.entries(ACTIONS).map(([name, code]) => [code, name as DiscordAction]),
);

export interface DiscordCustomId {
  action: DiscordAction;
  channelId: string;
  gateId: string;
  question?: number;
  provider?: string;
}

export const CUSTOM_ID_LIMIT = 100;

export function encodeCustomId(id: DiscordCustomId): string {
  const encoded = [
    ACTIONS[id.action],
    id.channelId,
    id.gateId,
    ...(id.question !== undefined ? [id.question] : id.provider !== undefined ? [id.provider] : []),
  ].join(':');
  if (encoded.length > CUSTOM_ID_LIMIT)
    throw new Error(`custom_id over ${CUSTOM_ID_LIMIT} characters: ${encoded}`);
  return encoded;
}

export function decodeCustomId(raw: unknown): DiscordCustomId | undefined {
  if (typeof raw !== 'string' || raw.length > CUSTOM_ID_LIMIT) return undefined;
  const match = /^([a-z]{2}):(\d{17,20}):([A-Za-z0-9-]{1,64})(?::([a-z0-9-]{1,32}))?$/.exec(raw);
  const action = match ? BY_CODE.get(match[1]!) : undefined;
  if (!match || !action) return undefined;
  const extra = match[4];
  const base = { action, channelId: match[2]!, gateId: match[3]! };
  if (action === 'select')
    return extra && /^[0-4]$/.test(extra) ? { ...base, question: Number(extra) } : undefined;
  if (action === 'connect')
    return extra && PROVIDER_NAME.test(extra) ? { ...base, provider: extra } : undefined;
  return extra === undefined ? base : undefined;
}
