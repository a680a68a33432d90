import { describe, expect, it } from 'vitest';
import { checkToolArgs, shellExecuteTool } from '../../common/tools/definitions';
import type { Decision } from '../../workflows/session/contract';
import {
  describeOutcome,
  evaluateDecision,
  openApprovalGate,
  parseTypedDecision,
  resultWithoutRun,
} from '../../workflows/session/gates';
import { unresolvedToolCalls } from '../../workflows/session/transcript';

const NOW = Date.UTC(2026, 10, 22, 14, 5);

function gate(timeoutMs: number | 'never' = 60_000) {
  return openApprovalGate({
    id: 'g1',
    toolCallId: 'c1',
    toolName: 'shell_execute',
    args: { command: 'ls' },
    subject: 'ls',
    requesterId: 'alice',
    approvers: ['bob', 'bob'],
    now: NOW,
    timeoutMs,
  });
}

function decide(g: ReturnType<typeof gate> | undefined, decision: Partial<Decision>) {
  return evaluateDecision({
    gate: g,
    decision: { gateId: 'g1', choice: 'approve', userId: 'alice', ...decision },
    now: NOW + 1000,
    checkArgs: (args) => checkToolArgs(shellExecuteTool, args),
    newGrantId: () => 'grant-1',
    sessionId: 'session:web:s',
  });
}

describe('approval gates', () => {
  it('opens pending with an expiry, or none for "never"', () => {
    expect(gate()).toMatchObject({ status: 'pending', expiresAt: NOW + 60_000, approvers: ['bob'] });
    expect(gate('never').expiresAt).toBeNull();
  });

  it('lets the requester and configured approvers decide, and refuses anyone else', () => {
    expect(decide(gate(), { userId: 'alice' })).toMatchObject({
      ok: true,
      resolution: { outcome: 'approved', by: 'alice' },
    });
    expect(decide(gate(), { userId: 'bob' })).toMatchObject({ ok: true });
    const refused = decide(gate(), { userId: 'mallory' });
    expect(refused).toEqual({
      ok: false,
      notice: 'You may not decide on this shell_execute call: only @alice, @bob may. Nothing changed.',
    });
  });

  it('answers a second decision with who decided and when', () => {
    const g = gate();
    g.status = 'resolved';
    g.resolution = { outcome: 'approved', by: 'bob', at: NOW };
    expect(decide(g, { choice: 'deny' })).toEqual({
      ok: false,
      notice: 'This shell_execute call was already approved by @bob at 14:05 UTC. Nothing changed.',
    });
  });

  it('refuses an unknown gate', () => {
    expect(decide(undefined, {})).toMatchObject({
      ok: false,
      notice: expect.stringContaining('unknown gate'),
    });
  });

  it('validates edited arguments against the tool schema', () => {
    expect(decide(gate(), { choice: 'edit', args: { command: 'ls -la' } })).toMatchObject({
      ok: true,
      resolution: { outcome: 'edited', args: { command: 'ls -la' } },
    });
    expect(decide(gate(), { choice: 'edit', args: { command: 5 } })).toMatchObject({
      ok: false,
      notice: expect.stringContaining('still open'),
    });
    expect(decide(gate(), { choice: 'edit' })).toMatchObject({ ok: false });
  });

  it('makes an always-allow grant for the requester, scoped and optionally patterned', () => {
    const session = decide(gate(), { choice: 'always' });
    expect(session).toMatchObject({
      ok: true,
      resolution: { grant: { id: 'grant-1', userId: 'alice', scope: 'session', sessionId: 'session:web:s' } },
    });
    const user = decide(gate(), { choice: 'always', scope: 'user', pattern: 'ls *', userId: 'bob' });
    expect(user).toMatchObject({
      ok: true,
      resolution: { by: 'bob', grant: { userId: 'alice', scope: 'user', pattern: 'ls *' } },
    });
    expect(user.ok && user.resolution.grant?.sessionId).toBeUndefined();
  });

  it('tells the model "expired: nobody decided", never "denied", and includes a deny reason', () => {
    const g = gate();
    g.resolution = { outcome: 'expired', by: 'system', at: NOW };
    expect(resultWithoutRun(g)).toEqual({
      status: 'expired',
      content: 'expired: nobody decided in time. The tool was not run.',
    });
    expect(describeOutcome(g)).toBe('expired at 14:05 UTC: nobody decided');
    g.resolution = { outcome: 'denied', by: 'bob', at: NOW, reason: 'prod is frozen' };
    expect(resultWithoutRun(g)).toMatchObject({
      status: 'denied',
      content: expect.stringContaining('denied by @bob: prod is frozen'),
    });
    g.resolution = { outcome: 'approved', by: 'bob', at: NOW };
    expect(resultWithoutRun(g)).toBeUndefined();
  });
});

describe('typed replies', () => {
  it('reads "approve" and "deny <reason>"', () => {
    expect(parseTypedDecision('approve')).toEqual({ choice: 'approve' });
    expect(parseTypedDecision('  Approved. ')).toEqual({ choice: 'approve' });
    expect(parseTypedDecision('deny')).toEqual({ choice: 'deny' });
    expect(parseTypedDecision('deny: wrong host')).toEqual({ choice: 'deny', reason: 'wrong host' });
  });

  it('leaves ordinary sentences alone', () => {
    expect(parseTypedDecision('approve the budget for next year')).toBeUndefined();
    expect(parseTypedDecision('denying things is hard')).toBeUndefined();
    expect(parseTypedDecision('please approve')).toBeUndefined();
  });
});

describe('transcript', () => {
  it('finds the tool calls of the last assistant message that have no result', () => {
    const calls = [
      { id: 'a', name: 'x', args: {} },
      { id: 'b', name: 'x', args: {} },
    ];
    expect(
      unresolvedToolCalls([
        { role: 'user', id: 'u', userId: 'alice', text: 'hi', at: 0 },
        { role: 'assistant', id: 'm', text: '', toolCalls: calls, at: 0 },
        { role: 'tool', id: 't', toolCallId: 'a', name: 'x', status: 'ok', content: '', at: 0 },
      ]).map((c) => c.id),
    ).toEqual(['b']);
  });
});
