/**
 * One person, one identity across channels. The policy file's `users` table names a person and lists the
 * OpenID subjects, Slack ids and Discord ids that are that person.
 *
 * Web identities can never collide with one another or with chat ids:
 * - sign-in mode trusts only the provider's `sub` (never `preferred_username`, which people can often choose):
 *   a listed `sub` is its `users` name, anything else is `<provider>:<sub>`;
 * - proxy mode takes the proxy's name, which may not contain `:`; a name shaped like a Slack or Discord id,
 *   or the reserved `local`, becomes `web:<name>`. Names with `:` are therefore always ours, never a person's.
 */
import type { PolicyFile } from '../infra/config';
import { DISCORD_USER_ID, SLACK_USER_ID, teamsUserId } from './chat-ids';

const PROXY_NAME = /^[A-Za-z0-9._@-]{1,120}$/;
const SUBJECT = /^[\x21-\x7e]{1,255}$/;
/** The longest user id grants, gates and the vault take (common/grants.ts, the transcript format). */
const MAX_USER_ID = 128;

export type UsersTable = PolicyFile['users'];

/** Who a proxy-named person is, or undefined for a name that cannot be a user id. */
export function proxyUserId(name: string, users: UsersTable): string | undefined {
  if (!PROXY_NAME.test(name)) return undefined;
  if (Object.hasOwn(users, name)) return name;
  return SLACK_USER_ID.test(name) || DISCORD_USER_ID.test(name) || name === 'local' ? `web:${name}` : name;
}

/** Who a signed-in person is, from the provider's subject alone; undefined when the subject is unusable. */
export function signInUserId(provider: string, sub: string, users: UsersTable): string | undefined {
  if (!SUBJECT.test(sub)) return undefined;
  const listed = Object.entries(users).find(([, entry]) => entry.sub.includes(sub));
  if (listed) return listed[0];
  // User ids allow letters, digits and . _ @ : - ; anything else in a subject is spelled out, reversibly.
  const safe = sub.replace(/[^A-Za-z0-9._@-]/g, (c) => `~${c.charCodeAt(0).toString(16)}`);
  const id = `${provider}:${safe}`;
  // Refused, not cut: two long subjects cut to one prefix would be one person.
  return id.length <= MAX_USER_ID ? id : undefined;
}

/** Every id this person has: the web identity and its mapped Slack and Discord ids. */
export function aliasesOf(userId: string, users: UsersTable): string[] {
  const entry = Object.hasOwn(users, userId) ? users[userId] : undefined;
  return [
    userId,
    ...(entry?.slack ?? []),
    ...(entry?.discord ?? []),
    ...(entry?.teams ?? []).map(teamsUserId),
  ];
}

/** The person a web, Slack or Discord id belongs to: their `users` name when listed, else the id itself. */
export function personOf(userId: string, users: UsersTable): string {
  if (Object.hasOwn(users, userId)) return userId;
  const listed = Object.entries(users).find(
    ([, entry]) =>
      entry.slack.includes(userId) ||
      entry.discord.includes(userId) ||
      (entry.teams ?? []).some((id) => teamsUserId(id) === userId),
  );
  return listed ? listed[0] : userId;
}

/**
 * One person, one vote: ids as people. Each id of someone listed in `users` (by name or by one of their ids) brings
 * all of that person's ids, the id as given first (a channel then mentions them as the policy does), and `people`
 * maps each of those ids to the person's name. Ids of nobody listed stay as they are, people of their own.
 */
export function asPeople(
  ids: readonly string[],
  users: UsersTable,
  people: Record<string, string> = {},
): { ids: string[]; people: Record<string, string> } {
  const all = ids.flatMap((id) => {
    const person = personOf(id, users);
    const aliases = Object.hasOwn(users, person) ? aliasesOf(person, users) : [];
    if (aliases.length < 2) return [id];
    for (const alias of aliases) people[alias] = person;
    return [id, ...aliases];
  });
  return { ids: [...new Set(all)], people };
}
