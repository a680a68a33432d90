/**
 * Property tests of the gate rules (fast-check): whatever sequence of decisions arrives, from whoever, in any order,
 * a gate obeys its rules. Driven through the gates' owner with no Temporal. A failing case prints its seed and the
 * shortest sequence that breaks the rule (`fc.assert` shrinks it).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { approverIds } from '../../common/gates/deciders';
import { Gates, type GateHost } from '../../workflows/session/gate-owner';
import { openApprovalGate } from '../../workflows/session/gates';
import { SessionState } from '../../workflows/session/state';

const PEOPLE = ['alice', 'bob', 'carol', 'dave', 'mallory'] as const;
const CHOICES = ['approve', 'deny', 'always', 'edit', 'delegate'] as const;

const decision = fc.record({
  userId: fc.constantFrom(...PEOPLE),
  choice: fc.constantFrom(...CHOICES),
  to: fc.constantFrom(...PEOPLE),
});

function owner() {
  const state = new SessionState(
    { sessionId: 's1', channel: 'web', ownerId: 'alice' },
    () => 0,
    () => 'id',
  );
  const host: GateHost = { state, sessionId: 'session:web:s1', continuingAsNew: false, emit: () => {} };
  return new Gates(host, undefined);
}

describe('gate rules, for any sequence of decisions', () => {
  it('decide once, never for a stranger, and approve only with enough distinct approvers the rules allow', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.integer({ min: 1, max: 3 }),
        fc.subarray(['bob', 'carol', 'dave'], { minLength: 1 }),
        fc.array(decision, { maxLength: 12 }),
        (selfApprove, approvalsNeeded, approvers, decisions) => {
          const gates = owner();
          const gate = openApprovalGate({
            id: 'g1',
            toolCallId: 'c1',
            toolName: 'shell_execute',
            args: { command: 'ls' },
            subject: 'ls',
            requesterId: 'alice',
            approvers,
            now: 0,
            timeoutMs: 'never',
            selfApprove,
            approvalsNeeded,
          });
          gates.open(gate);
          const mayEver = new Set([
            'alice',
            ...approvers,
            ...decisions.filter((d) => d.choice === 'delegate').map((d) => d.to),
          ]);
          let resolvedAs: string | undefined;
          for (const d of decisions) {
            const before = JSON.stringify(gate.resolution ?? null);
            const wasPending = gate.status === 'pending';
            const votersBefore = new Set(approverIds(gate));
            gates.decide({
              gateId: 'g1',
              userId: d.userId,
              choice: d.choice,
              ...(d.choice === 'edit' ? { args: { command: 'ls -la' } } : {}),
              ...(d.choice === 'delegate' ? { to: d.to } : {}),
            });
            // Once decided, a gate never changes its outcome.
            if (!wasPending) expect(JSON.stringify(gate.resolution ?? null)).toBe(before);
            // Someone who could never decide changes nothing.
            if (!mayEver.has(d.userId)) expect(JSON.stringify(gate.resolution ?? null)).toBe(before);
            // A decision that resolved the gate came from someone allowed to decide it then.
            if (wasPending && gate.status !== 'pending') {
              expect(
                gate.requesterId === d.userId ||
                  votersBefore.has(d.userId) ||
                  gate.approvers.includes(d.userId),
              ).toBe(true);
              resolvedAs = gate.resolution!.outcome;
            }
          }
          // One person, one vote: nobody's approval counts twice, the requester's never under four-eyes.
          const approvals = gate.approvals ?? [];
          expect(new Set(approvals.map((a) => a.by)).size).toBe(approvals.length);
          if (!selfApprove) expect(approvals.some((a) => a.by === 'alice')).toBe(false);
          // Approved (as is, edited, or always) only with as many approvals as the rules need.
          if (resolvedAs === 'approved' || resolvedAs === 'edited' || resolvedAs === 'always')
            expect(approvals.length).toBeGreaterThanOrEqual(approvalsNeeded);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
