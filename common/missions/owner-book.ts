/**
 * The rules of one owner's mission directory (`mission-directory:<owner>`), pure so each is unit-tested without
 * Temporal: names are unique among the owner's missions that may still run (a completed mission gives its name
 * back), the number of missions an owner keeps is bounded (the directory carries them through continue-as-new, so
 * its size must stay far below Temporal's 2 MB payload limit), and a completed mission is kept as history until
 * newer completions push it out.
 */
import type { MissionRecord } from './types';

/** Missions that may still run, per owner: ~150 bytes each, so a directory stays under 400 KB. */
export const MAX_OWNER_MISSIONS = 2_000;
/** Completed missions kept by name (mission_get still shows how they ended); older ones leave the directory. */
export const MAX_COMPLETED_KEPT = 200;

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const live = (record: MissionRecord) => record.status !== 'completed';

/** A mission of this owner that may still run and already has the name (not the one being renamed). */
export function nameClash(
  records: readonly MissionRecord[],
  name: string,
  except?: string,
): MissionRecord | undefined {
  return records.find((r) => live(r) && r.id !== except && same(r.name, name));
}

/** Why a new mission may not be registered, or undefined. A retried create (same id) is never refused. */
export function registrationRefusal(
  records: readonly MissionRecord[],
  record: MissionRecord,
): string | undefined {
  if (records.some((r) => r.id === record.id)) return undefined;
  if (nameClash(records, record.name))
    return `you already have a mission named "${record.name}": pick another name, or update that one`;
  if (records.filter(live).length >= MAX_OWNER_MISSIONS)
    return `you have ${MAX_OWNER_MISSIONS} missions that may still run, the most one person keeps: complete some (mission_complete) first`;
  return undefined;
}

/** Why a mission may not take this name, or undefined. */
export function renameRefusal(
  records: readonly MissionRecord[],
  id: string,
  newName: string,
): string | undefined {
  const record = records.find((r) => r.id === id);
  if (!record) return 'no such mission';
  if (!live(record))
    return `"${record.name}" is completed: it will not run again and keeps its name as history; mission_create makes a new one`;
  if (nameClash(records, newName, id)) return `you already have a mission named "${newName}"`;
  return undefined;
}

/**
 * A mission told its record (at every change of status, sharing or name, and at each start of an execution):
 * insert or update it. A completion moves it to the end, so the completed ones are in the order they completed
 * and the oldest leave first.
 */
export function applyRecord(records: MissionRecord[], change: MissionRecord): void {
  const index = records.findIndex((r) => r.id === change.id);
  const before = index >= 0 ? records[index] : undefined;
  if (before && index >= 0) records.splice(index, 1);
  const completedNow = change.status === 'completed' && before?.status !== 'completed';
  if (before && !completedNow) records.splice(index, 0, { ...before, ...change });
  else records.push({ ...before, ...change });
  pruneCompleted(records);
}

/** Records handed over by the old one-for-everyone directory: merged by id, what this directory knows wins. */
export function importRecords(records: MissionRecord[], incoming: readonly MissionRecord[]): number {
  let added = 0;
  for (const record of incoming) {
    if (records.some((r) => r.id === record.id)) continue;
    records.push({ ...record });
    added++;
  }
  pruneCompleted(records);
  return added;
}

function pruneCompleted(records: MissionRecord[]): void {
  let excess = records.filter((r) => !live(r)).length - MAX_COMPLETED_KEPT;
  for (let i = 0; excess > 0 && i < records.length;) {
    if (!live(records[i]!)) {
      records.splice(i, 1);
      excess--;
    } else i++;
  }
}
