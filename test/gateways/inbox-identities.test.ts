/**
 * One person, one vote, whichever of their ids the policy names: the review's attacks on "Needs you" as rows. Alice
 * is `alice` on the web and `UALICE01` in Slack; the workflow compares ids, so the inbox must not let her reach a
 * Slack gate as a second person. Each row is a gate as the workflow holds it and what the inbox offers Alice.
 */
import { describe, expect, it } from 'vitest';
import { handOverRefusal, inboxItem } from '../../gateways/web/inbox';
import type { ApprovalGate } from '../../workflows/session/contract';
import { openApprovalGate } from '../../workflows/session/gates';

const USERS = {
  alice: { sub: [], slack: ['UALICE01'], discord: [] },
  bob: { sub: [], slack: ['UBOB0001'], discord: [] },
};
const SLACK = 'session:slack:T1:C1:1700000000.000001';

function slackGate(
  rules: { selfApprove?: boolean; approvalsNeeded?: number },
  requesterId: string,
  approvers: string[],
) {
  return openApprovalGate({
    id: 'g1',
    toolCallId: 'c1',
    toolName: 'shell_execute',
    args: { command: 'ls' },
    subject: 'ls',
    requesterId,
    approvers,
    now: 1,
    timeoutMs: 60_000,
    ...rules,
  }) as ApprovalGate;
}

describe('Needs you and people with several ids', () => {
  it('never lets a requester under four-eyes approve their own Slack call as their web id', () => {
    const gate = slackGate({ selfApprove: false }, 'UALICE01', ['alice', 'bob']);
    const item = inboxItem(USERS, 'alice', SLACK, gate)!;
    expect(item.decideAs).toBe('UALICE01'); // the id a click in that thread carries
    expect(item.mayApprove).toBe(false); // she may deny, not approve
    expect(inboxItem(USERS, 'bob', SLACK, gate)!.mayApprove).toBe(true);
  });

  it('counts a person once in a quorum: approved in Slack, no second approval from the inbox', () => {
    const gate = slackGate({ approvalsNeeded: 2 }, 'UCAROL01', ['alice', 'UALICE01', 'bob']);
    gate.approvals = [{ by: 'UALICE01', at: 2 }];
    expect(inboxItem(USERS, 'alice', SLACK, gate)!.mayApprove).toBe(false);
    // And the other way round: her inbox approval is sent as her Slack id, which a later Slack click repeats.
    const fresh = slackGate({ approvalsNeeded: 2 }, 'UCAROL01', ['alice', 'UALICE01', 'bob']);
    expect(inboxItem(USERS, 'alice', SLACK, fresh)!.decideAs).toBe('UALICE01');
  });

  it('refuses a hand-over to a person who may already decide, under another id, or who asked', () => {
    const gate = slackGate({}, 'UCAROL01', ['UBOB0001']);
    expect(handOverRefusal(USERS, gate, 'bob')).toBe('@bob may already decide it');
    expect(handOverRefusal(USERS, slackGate({}, 'UALICE01', ['bob']), 'alice')).toBe('@alice asked for it');
    expect(handOverRefusal(USERS, gate, 'dave')).toBeUndefined();
  });

  it('shows nothing to someone with no id on the gate', () => {
    expect(inboxItem(USERS, 'mallory', SLACK, slackGate({}, 'UALICE01', ['bob']))).toBeUndefined();
  });
});
