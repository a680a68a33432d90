/** The addressing rules of mission tools, as pure functions. */
import { describe, expect, it } from 'vitest';
import { approvalRulesFor } from '../../common/approval-rules';
import { distance, legacyRename, resolveMission } from '../../common/missions/addressing';
import type { MissionRecord } from '../../common/missions/types';
import { missionFireSchema, policyEntryName } from '../../common/tools/missions';

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

  it('refuses a name two owners share missions under, naming the owners, and takes the id of either', () => {
    const withNamesakes = [
      ...records,
      record('id-6', 'standup', 'bob', true),
      record('id-7', 'standup', 'carol', true),
    ];
    const ambiguous = resolveMission(withNamesakes, 'dave', { name: 'standup' });
    expect(ambiguous).toEqual({
      ok: false,
      error: expect.stringContaining('2 shared missions are called "standup"'),
    });
    expect(JSON.stringify(ambiguous)).toContain("@bob's, id id-6");
    expect(JSON.stringify(ambiguous)).toContain("@carol's, id id-7");
    expect(resolveMission(withNamesakes, 'dave', { id: 'id-7' })).toMatchObject({
      ok: true,
      record: { id: 'id-7' },
    });
    // Its own owner means their own.
    expect(resolveMission(withNamesakes, 'carol', { name: 'standup' })).toMatchObject({
      record: { id: 'id-7' },
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

  it('tries an id that is no UUID as a name (legacy prompts put names there), a UUID never', () => {
    expect(resolveMission(records, 'alice', { id: 'weekly digest' })).toMatchObject({
      ok: true,
      record: { id: 'id-2' },
    });
    expect(resolveMission(records, 'alice', { id: 'secret plan' })).toMatchObject({ ok: false });
    const uuid = '7f1c1a52-3f0e-4c55-9a55-2d1f3b1f0a11';
    expect(resolveMission([record(uuid, uuid)], 'alice', { id: uuid })).toMatchObject({
      ok: true,
      record: { id: uuid },
    });
    expect(resolveMission(records, 'alice', { id: uuid })).toEqual({
      ok: false,
      error: expect.stringContaining(`no mission of yours has id ${uuid}`),
    });
  });

  it('accepts the positional {"_args": [name]} shape as a name, beside other arguments', () => {
    expect(missionFireSchema.parse({ _args: ['daily report'] })).toEqual({ mission: 'daily report' });
    expect(missionFireSchema.parse({ _args: ['daily report'], context: 'x' })).toEqual({
      mission: 'daily report',
      context: 'x',
    });
    expect(missionFireSchema.safeParse({ _args: ['a', 'b'] }).success).toBe(false);
    expect(missionFireSchema.safeParse({ _args: 'a' }).success).toBe(false);
  });

  it('lets a policy on mission_* govern its routine_* alias, unless the alias has its own', () => {
    expect(policyEntryName('routine_fire', { mission_fire: {} })).toBe('mission_fire');
    expect(policyEntryName('routine_fire', { mission_fire: {}, routine_fire: {} })).toBe('routine_fire');
    expect(policyEntryName('routine_nope', {})).toBe('routine_nope');
    expect(policyEntryName('shell_execute', {})).toBe('shell_execute');
    const policy = {
      approvers: [],
      selfApprove: true,
      approvals: 1,
      tools: {
        mission_fire: {
          approvers: ['boss'],
          selfApprove: false,
          approvals: 1,
          allow: [],
          deny: [],
          when: [],
        },
      },
    };
    expect(approvalRulesFor(policy, 'routine_fire')).toEqual({
      approvers: ['boss'],
      selfApprove: false,
      approvals: 1,
    });
  });

  it('measures edit distance', () => {
    expect(distance('kitten', 'sitting')).toBe(3);
    expect(distance('', 'abc')).toBe(3);
  });
});
