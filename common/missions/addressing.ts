/**
 * How tools find a mission: by name (the primary key, unique per owner), by id (a legacy alternative; an
 * `id` that is no UUID is tried as a name, as older prompts pass names there), or by a positional argument
 * (always a name). A person sees only their own missions and shared ones;
 * errors never reveal anything else. Pure, so every rule is unit-tested.
 */
import type { MissionRecord } from './types';

export interface MissionAddress {
  name?: string | undefined;
  id?: string | undefined;
  /** A bare argument: treated as a name, never as an id. */
  mission?: string | undefined;
}

export type Resolution = { ok: true; record: MissionRecord } | { ok: false; error: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const visibleTo = (records: readonly MissionRecord[], userId: string): MissionRecord[] =>
  records.filter((r) => r.ownerId === userId || r.shared);

/** Shared missions of several owners with this name (none of the requester's own): no one of them is meant more. */
function sharedNamesakes(visible: readonly MissionRecord[], name: string, userId: string): MissionRecord[] {
  const matches = visible.filter((r) => r.name.toLowerCase() === name.toLowerCase());
  return matches.some((r) => r.ownerId === userId) || matches.length < 2 ? [] : matches;
}

/**
 * Own missions first: a name is unique among an owner's missions that may still run, and the requester's own wins
 * over a shared one. A completed mission gives its name back; it is still found by it while no new one has taken
 * it (the latest completed, as mission_get shows how it ended).
 */
function byName(visible: readonly MissionRecord[], name: string, userId: string): MissionRecord | undefined {
  const matches = visible.filter((r) => r.name.toLowerCase() === name.toLowerCase());
  const own = matches.filter((r) => r.ownerId === userId);
  return (
    own.find((r) => r.status !== 'completed') ?? own.at(-1) ?? (matches.length === 1 ? matches[0] : undefined)
  );
}

export function resolveMission(
  records: readonly MissionRecord[],
  userId: string,
  address: MissionAddress,
): Resolution {
  const visible = visibleTo(records, userId);
  const given = address.id?.trim() || undefined;
  // A legacy `id` that is no mission's id and cannot be one is a name (unless a name is given too).
  const idAsName =
    given && !UUID.test(given) && !visible.some((r) => r.id === given) && !address.name && !address.mission
      ? given
      : undefined;
  const name = (address.name ?? address.mission ?? idAsName)?.trim() || undefined;
  const id = idAsName ? undefined : given;
  if (!name && !id) return { ok: false, error: 'name the mission: pass "name" (see mission_list for yours)' };
  const named = name ? byName(visible, name, userId) : undefined;
  const identified = id ? visible.find((r) => r.id === id) : undefined;
  const namesakes = name && !id ? sharedNamesakes(visible, name, userId) : [];
  if (namesakes.length)
    return {
      ok: false,
      error: `${namesakes.length} shared missions are called "${name}" (${namesakes
        .map((r) => `@${r.ownerId}'s, id ${r.id}`)
        .join('; ')}): pass the id of the one you mean`,
    };
  if (name && id) {
    if (named && identified && named.id !== identified.id)
      return {
        ok: false,
        error: `"${name}" and id ${id} are two different missions ("${named.name}" and "${identified.name}"); pass only one of them`,
      };
    if (named && identified) return { ok: true, record: named };
  }
  if (named) return { ok: true, record: named };
  if (identified) return { ok: true, record: identified };
  if (name) return { ok: false, error: notFound(name, visible) };
  return {
    ok: false,
    error: `no mission of yours has id ${id}; mission_list shows your missions and their names`,
  };
}

function notFound(name: string, visible: readonly MissionRecord[]): string {
  const close = visible
    .map((r) => ({ r, d: distance(name.toLowerCase(), r.name.toLowerCase()) }))
    .filter(
      ({ r, d }) =>
        d <= Math.max(2, Math.floor(name.length / 3)) || r.name.toLowerCase().includes(name.toLowerCase()),
    )
    .sort((a, b) => a.d - b.d)
    .slice(0, 3)
    .map(({ r }) => `"${r.name}"`);
  const hint = close.length
    ? `Did you mean ${close.join(' or ')}?`
    : visible.length
      ? `Your missions: ${visible
          .slice(0, 10)
          .map((r) => `"${r.name}"`)
          .join(', ')}.`
      : 'You have no missions yet; mission_create makes one.';
  return `no mission named "${name}". ${hint}`;
}

/** Levenshtein distance, for "did you mean". */
export function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}

/** The legacy update shape `{id, name}` means "rename the mission with this id to this name". */
export function legacyRename(
  address: MissionAddress & { new_name?: string | undefined },
  records: readonly MissionRecord[],
  userId: string,
): { id: string; newName: string } | undefined {
  if (address.new_name || !address.id || !address.name) return undefined;
  const visible = visibleTo(records, userId);
  const identified = visible.find((r) => r.id === address.id);
  const named = byName(visible, address.name, userId);
  if (!identified || named) return undefined; // the name is someone's mission: a plain address, not a rename
  return { id: identified.id, newName: address.name };
}
