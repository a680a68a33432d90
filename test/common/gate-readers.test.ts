/**
 * Who a gate lets read its conversation on the web (`GET /api/conversations/...`): whoever may decide it while it
 * waits; after, its requester and the approvers its rules named. A hand-over or an escalation lends read access
 * only while the gate waits, never for good.
 */
import { describe, expect, it } from 'vitest';
import { gateLetsRead } from '../../common/gates/deciders';
import type { ApprovalGate } from '../../workflows/session/contract';

const gate = (over: Partial<ApprovalGate> = {}): ApprovalGate => ({
  kind: 'approval',
  id: 'g1',
  toolCallId: 'c1',
  toolName: 'shell_execute',
  subject: 'echo hi',
  args: {},
  requesterId: 'alice',
  approvers: ['bob'],
  createdAt: 0,
  expiresAt: null,
  status: 'pending',
  ...over,
});

describe('who a gate lets read its conversation', () => {
  it('lets a hand-over’s and an escalation’s people read while it waits, and not after', () => {
    const waiting = gate({
      approvers: ['bob', 'dave', 'carol'],
      delegations: [{ by: 'alice', to: 'dave', at: 1 }],
      escalation: { at: 2, to: ['carol'], done: true },
    });
    for (const who of ['alice', 'bob', 'dave', 'carol']) expect(gateLetsRead(waiting, who), who).toBe(true);
    expect(gateLetsRead(waiting, 'mallory')).toBe(false);

    const decided = { ...waiting, status: 'resolved' as const };
    expect(['alice', 'bob', 'dave', 'carol', 'mallory'].filter((who) => gateLetsRead(decided, who))).toEqual([
      'alice',
      'bob',
    ]);
  });

  it('keeps an escalation that has not happened from taking anyone’s access', () => {
    const decided = gate({ status: 'resolved', escalation: { at: 2, to: ['bob'] } });
    expect(gateLetsRead(decided, 'bob')).toBe(true);
  });
});
