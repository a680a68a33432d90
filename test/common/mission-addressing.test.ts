/** The addressing rules of mission tools, as pure functions. */
import { describe, expect, it } from 'vitest';
import { distance, legacyRename, resolveMission } from '../../common/missions/addressing';
import type { MissionRecord } from '../../common/missions/types';

const record = (id: string, name: string, ownerId = 'alice', shared = false): MissionRecord => ({
  id,
  name,
  ownerId,
  shared,
  status: 'active',
});
const records = [
  record('id-1', 'daily report'),
  record('id-2', 'weekly digest'),
  record('id-3', 'secret plan', 'bob'),
  record('id-4', 'team standup', 'bob', true),
  record('id-5', 'daily report', 'bob'),
];

describe('mission addressing', () => {
  it('finds by name (case-insensitive), by id, by both agreeing, and by a positional name', () => {
    expect(resolveMission(records, 'alice', { name: 'Daily Report' })).toMatchObject({
      ok: true,
      record: { id: 'id-1' },
    });
    expect(resolveMission(records, 'alice', { id: 'id-2' })).toMatchObject({
      ok: true,
      record: { id: 'id-2' },
    });
    expect(resolveMission(records, 'alice', { name: 'weekly digest', id: 'id-2' })).toMatchObject({
      ok: true,
    });
    expect(resolveMission(records, 'alice', { mission: 'weekly digest' })).toMatchObject({
      ok: true,
      record: { id: 'id-2' },
    });
  });

  it('refuses a name and an id that disagree, naming both', () => {
    const result = resolveMission(records, 'alice', { name: 'daily report', id: 'id-2' });
    expect(result).toEqual({
      ok: false,
      error: expect.stringContaining(
        '"daily report" and id id-2 are two different missions ("daily report" and "weekly digest")',
      ),
    });
  });

  it('never treats a positional argument as an id', () => {
    expect(resolveMission(records, 'alice', { mission: 'id-1' })).toMatchObject({ ok: false });
  });

  it("prefers the requester's own mission when a shared one has the same name", () => {
    expect(resolveMission(records, 'bob', { name: 'daily report' })).toMatchObject({
      record: { id: 'id-5' },
    });
  });

  it("suggests close names, and never reveals another user's missions", () => {
    const typo = resolveMission(records, 'alice', { name: 'dialy report' });
    expect(typo).toEqual({ ok: false, error: expect.stringContaining('Did you mean "daily report"') });
    const hidden = resolveMission(records, 'alice', { name: 'secret plan' });
    expect(hidden.ok).toBe(false);
    expect(JSON.stringify(hidden)).not.toContain('id-3');
    const byId = resolveMission(records, 'alice', { id: 'id-3' });
    expect(byId.ok).toBe(false);
    expect(JSON.stringify(byId)).not.toContain('secret plan');
    // Shared missions are visible to everyone.
    expect(resolveMission(records, 'alice', { name: 'team standup' })).toMatchObject({
      ok: true,
      record: { id: 'id-4' },
    });
    expect(resolveMission(records, 'carol', {})).toEqual({
      ok: false,
      error: expect.stringContaining('name the mission'),
    });
  });

  it('reads the legacy {id, name} update as a rename, but not when the name is an existing mission', () => {
    expect(legacyRename({ id: 'id-2', name: 'weekly summary' }, records, 'alice')).toEqual({
      id: 'id-2',
      newName: 'weekly summary',
    });
    expect(legacyRename({ id: 'id-2', name: 'weekly digest' }, records, 'alice')).toBeUndefined();
    expect(legacyRename({ id: 'id-2', name: 'x', new_name: 'y' }, records, 'alice')).toBeUndefined();
    expect(legacyRename({ id: 'id-3', name: 'mine now' }, records, 'alice')).toBeUndefined();
  });

  it('measures edit distance', () => {
    expect(distance('kitten', 'sitting')).toBe(3);
    expect(distance('', 'abc')).toBe(3);
  });
});
