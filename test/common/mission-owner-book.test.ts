/** One owner's mission directory rules, without Temporal: unique live names, a bound, completions as history. */
import { describe, expect, it } from 'vitest';
import {
  applyRecord,
  importRecords,
  MAX_COMPLETED_KEPT,
  MAX_OWNER_MISSIONS,
  registrationRefusal,
  renameRefusal,
} from '../../common/missions/owner-book';
import type { MissionRecord } from '../../common/missions/types';

const record = (id: string, name: string, status: MissionRecord['status'] = 'active'): MissionRecord => ({
  id,
  name,
  ownerId: 'alice',
  shared: false,
  status,
});

describe('an owner directory', () => {
  it('refuses a second live mission of the same name, in any case, but not a retried create', () => {
    const records = [record('1', 'Standup')];
    expect(registrationRefusal(records, record('2', 'standup'))).toBe(
      'you already have a mission named "standup": pick another name, or update that one',
    );
    expect(registrationRefusal(records, record('1', 'Standup'))).toBeUndefined();
    expect(registrationRefusal(records, record('3', 'standup review'))).toBeUndefined();
  });

  it('gives a completed mission’s name back, and refuses renaming a completed one with the reason', () => {
    const records = [record('1', 'standup', 'completed')];
    expect(registrationRefusal(records, record('2', 'standup'))).toBeUndefined();
    expect(renameRefusal(records, '1', 'old standup')).toBe(
      '"standup" is completed: it will not run again and keeps its name as history; mission_create makes a new one',
    );
    expect(renameRefusal(records, 'nope', 'x')).toBe('no such mission');
    records.push(record('2', 'standup'), record('3', 'report'));
    expect(renameRefusal(records, '3', 'STANDUP')).toBe('you already have a mission named "STANDUP"');
    expect(renameRefusal(records, '2', 'Standup')).toBeUndefined(); // its own name, in another case
  });

  it('keeps at most MAX_OWNER_MISSIONS live missions, so a directory stays far below the payload limit', () => {
    const records = Array.from({ length: MAX_OWNER_MISSIONS }, (_, i) => record(String(i), `m${i}`));
    expect(registrationRefusal(records, record('new', 'one more'))).toMatch(
      /^you have 2000 missions that may still run, the most one person keeps/,
    );
    applyRecord(records, { ...records[0]!, status: 'completed' });
    expect(registrationRefusal(records, record('new', 'one more'))).toBeUndefined();
    const size = JSON.stringify(records).length;
    expect(size).toBeLessThan(400_000);
  });

  it('applies a mission’s record in place, moves a completion to the end and keeps the newest completions', () => {
    const records = [record('a', 'first'), record('b', 'second')];
    applyRecord(records, { ...records[1]!, status: 'paused', shared: true });
    expect(records.map((r) => [r.id, r.status, r.shared])).toEqual([
      ['a', 'active', false],
      ['b', 'paused', true],
    ]);
    applyRecord(records, { ...records[0]!, status: 'completed' });
    expect(records.map((r) => r.id)).toEqual(['b', 'a']);
    applyRecord(records, record('c', 'told late')); // a mission the directory did not know tells its record
    expect(records.map((r) => r.id)).toEqual(['b', 'a', 'c']);
    for (let i = 0; i < MAX_COMPLETED_KEPT + 5; i++)
      applyRecord(records, record(`done${i}`, 'x', 'completed'));
    const completed = records.filter((r) => r.status === 'completed');
    expect(completed).toHaveLength(MAX_COMPLETED_KEPT);
    expect(completed[0]!.id).toBe('done5'); // the oldest five (and 'a') left first
    expect(records.filter((r) => r.status !== 'completed').map((r) => r.id)).toEqual(['b', 'c']);
  });

  it('merges handed-over records by id, keeping what it already knows', () => {
    const records = [record('a', 'renamed since')];
    expect(importRecords(records, [record('a', 'old name'), record('b', 'other')])).toBe(1);
    expect(records.map((r) => r.name)).toEqual(['renamed since', 'other']);
  });
});
