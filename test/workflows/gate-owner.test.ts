/**
 * The gates' owner with no Temporal: a real SessionState, a host that collects what would be shown, and a clock the
 * test moves. Open → decide → tick → tell, and every way a gate closes. And nothing else in the session engine writes
 * a gate.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Gates, type GateHost } from '../../workflows/session/gate-owner';
import { openApprovalGate, openQuestionGate } from '../../workflows/session/gates';
import type { OutboundEvent } from '../../workflows/session/outbound';
import { SessionState } from '../../workflows/session/state';

const T0 = Date.UTC(2026, 10, 29, 9, 0);

function owner(options: { told?: string[]; continuingAsNew?: boolean } = {}) {
  const state = new SessionState(
    { sessionId: 's1', channel: 'web', ownerId: 'alice' },
    () => Date.now(),
    () => 'id',
  );
  const shown: OutboundEvent[] = [];
  const host: GateHost = {
    state,
    sessionId: 'session:web:s1',
    continuingAsNew: options.continuingAsNew ?? false,
    emit: (event) => void shown.push(event),
  };
  return { gates: new Gates(host, options.told), state, shown };
}

const approval = (id = 'g1', extra: Partial<Parameters<typeof openApprovalGate>[0]> = {}) =>
  openApprovalGate({
    id,
    toolCallId: `call-${id}`,
    toolName: 'shell_execute',
    args: { command: 'ls' },
    subject: 'ls',
    requesterId: 'alice',
    approvers: ['bob'],
    now: Date.now(),
    timeoutMs: 60_000,
    ...extra,
  });

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => vi.useRealTimers());

describe('the gates’ owner', () => {
  it('opens, takes a decision, and tells it once (not again after a hand-over that told it)', () => {
    const { gates, state, shown } = owner();
    const gate = approval();
    gates.open(gate);
    expect(shown).toEqual([{ type: 'gate', gate, reason: 'opened' }]);
    const before = state.version;
    vi.setSystemTime(T0 + 5_000);
    gates.decide({ gateId: 'g1', choice: 'approve', userId: 'bob' });
    expect(gate).toMatchObject({
      status: 'resolved',
      resolution: { outcome: 'approved', by: 'bob', at: T0 + 5_000 },
    });
    expect(state.version).toBeGreaterThan(before); // the publication rewrites the memo
    gates.tellDecided(gate);
    gates.tellDecided(gate);
    expect(shown.filter((e) => e.type === 'gate_resolved')).toHaveLength(1);
    expect(state.notices.map((n) => n.text)).toEqual(['shell_execute approved by @bob at 09:00 UTC.']);
    expect(gates.told([gate])).toEqual(['g1']);

    const carried = owner({ told: ['g1'] });
    carried.gates.open(approval());
    carried.gates.tellDecided(carried.gates.get('g1')!);
    expect(carried.shown.filter((e) => e.type === 'gate_resolved')).toEqual([]);
  });

  it('refuses who may not decide, with the reason to them alone, and changes nothing', () => {
    const { gates, state } = owner();
    const gate = approval();
    gates.open(gate);
    gates.decide({ gateId: 'g1', choice: 'approve', userId: 'mallory' });
    expect(gate.status).toBe('pending');
    expect(state.notices).toEqual([
      expect.objectContaining({ to: 'mallory', text: expect.stringMatching(/^You may not decide/) }),
    ]);
  });

  it('hands an approval over, counting no extra vote, and asks again with the new decider', () => {
    const { gates, shown } = owner();
    const gate = approval('g1', { approvalsNeeded: 2, approvers: ['bob', 'carol'] });
    gates.open(gate);
    gates.decide({ gateId: 'g1', choice: 'delegate', userId: 'bob', to: 'dave' });
    expect(gate.approvers).toContain('dave');
    expect(gate.delegations).toEqual([{ by: 'bob', to: 'dave', at: T0 }]);
    expect(shown.at(-1)).toMatchObject({ type: 'gate', reason: 'repost' });
    gates.decide({ gateId: 'g1', choice: 'approve', userId: 'carol' });
    expect(gate.status).toBe('pending');
    expect(shown.at(-1)).toMatchObject({ type: 'gate_updated' });
    gates.decide({ gateId: 'g1', choice: 'approve', userId: 'dave' });
    expect(gate.resolution).toMatchObject({ outcome: 'approved' });
  });

  it('refuses a late click past the deadline while handing over, as the deadline promised', () => {
    const { gates } = owner({ continuingAsNew: true });
    const gate = approval();
    gates.open(gate);
    vi.setSystemTime(T0 + 61_000);
    gates.decide({ gateId: 'g1', choice: 'approve', userId: 'bob' });
    expect(gate.resolution).toMatchObject({ outcome: 'expired' });
  });

  it('keeps a question’s parts per person until complete, then answers it', () => {
    const { gates } = owner();
    const gate = openQuestionGate({
      id: 'q1',
      toolCallId: 'call-q1',
      questions: [
        { label: 'Size', prompt: 'Which?', options: [{ label: 'S' }, { label: 'M' }], multi_select: false },
        { label: 'Color', prompt: 'Which?', options: [{ label: 'red' }], multi_select: false },
      ] as never,
      requesterId: 'alice',
      approvers: [],
      now: T0,
      timeoutMs: 60_000,
    });
    gates.open(gate);
    gates.draft({
      gateId: 'q1',
      userId: 'alice',
      answers: [],
      texts: [],
      picks: [{ index: 0, selected: ['M'] }],
      submit: false,
    });
    expect(gate.status).toBe('pending');
    expect(gate.drafts?.alice).toEqual([{ question: 'Size', selected: ['M'] }]);
    gates.draft({
      gateId: 'q1',
      userId: 'alice',
      answers: [],
      texts: [],
      picks: [{ index: 1, selected: ['red'] }],
      submit: false,
    });
    expect(gate.resolution).toMatchObject({ outcome: 'answered', by: 'alice' });
  });

  it('closes gates by a new message, a Stop and a cancelled turn, each with its outcome', () => {
    const { gates, shown } = owner();
    const [a, b, c] = [approval('a'), approval('b'), approval('c', { requesterId: 'bob' })];
    for (const gate of [a, b, c]) gates.open(gate);
    expect(gates.supersedeBy('alice')).toBe(true);
    expect([a, b, c].map((g) => g.resolution?.outcome ?? g.status)).toEqual([
      'superseded',
      'superseded',
      'pending',
    ]);
    const stopped = gates.stopAll('bob');
    expect(stopped).toEqual([c]);
    expect(shown.filter((e) => e.type === 'gate_resolved')).toHaveLength(1);
    const d = approval('d');
    gates.open(d);
    gates.cancelApprovals();
    expect(d.resolution).toMatchObject({ outcome: 'cancelled' });
  });

  it('keeps where each prompt was posted, so later edits reach every copy', () => {
    const { gates } = owner();
    gates.open(approval());
    gates.recordPost('g1', 'slack:C1:1.2');
    gates.recordPost('g1', 'slack:C1:3.4');
    gates.recordPost('gone', 'slack:C1:5.6');
    expect(gates.get('g1')!.posts).toEqual(['slack:C1:1.2', 'slack:C1:3.4']);
  });

  it('is the only writer of a gate in the session engine', () => {
    const dir = path.resolve(__dirname, '../../workflows/session');
    const writes =
      /\b(?:gate|existing|proxy|open\[0\])!?\.(?:status|resolution|approvals|approvers|delegations|drafts|posts|note|typed|escalation)\s*=[^=]/;
    const writers = readdirSync(dir)
      .filter((file) => file.endsWith('.ts') && !['gates.ts', 'gate-owner.ts'].includes(file))
      .filter((file) => writes.test(readFileSync(path.join(dir, file), 'utf8')));
    expect(writers).toEqual([]);
  });
});
