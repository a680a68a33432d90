/**
 * One person, one identity across channels. The policy file's `users` table maps a web identity (a name) to
 * the Slack and Discord user ids that are the same person. A web name that looks like a Slack or Discord id
 * is never taken as one: it becomes `web:<name>`, so nobody can sign in on the web as someone's chat id.
 */
import type { PolicyFile } from './config';

const CHAT_ID = /^(?:[UW][A-Z0-9]{6,}|\d{5,})$/;
const VALID = /^[A-Za-z0-9._@:-]{1,120}$/;

export type UsersTable = PolicyFile['users'];

/**
 * The user id a web name acts as: a `users` key as is; otherwise the first name that is a valid user id
 * (never rewritten, so two names cannot collapse into one), kept apart from chat ids; undefined if none is.
 */
export function webUserId(names: readonly (string | undefined)[], users: UsersTable): string | undefined {
  const present = names.filter((n): n is string => !!n && VALID.test(n));
  const mapped = present.find((n) => Object.hasOwn(users, n));
  if (mapped) return mapped;
  const first = present[0];
  if (!first) return undefined;
  return CHAT_ID.test(first) ? `web:${first}` : first;
}

/** Every id this person has: the web identity and its mapped Slack and Discord ids. */
export function aliasesOf(userId: string, users: UsersTable): string[] {
  const entry = Object.hasOwn(users, userId) ? users[userId] : undefined;
  return [userId, ...(entry?.slack ?? []), ...(entry?.discord ?? [])];
}
