/** Who a signed-in or proxy-named person is: ids never collide, and one that would not fit is refused, not cut. */
import { describe, expect, it } from 'vitest';
import { withPeople } from '../../activities/tool-plans';
import { proxyUserId, signInUserId } from '../../common/identities';

const users = { alice: { sub: ['alice-sub-1'], slack: ['U0ALICE01'], discord: [] } };

describe('identities', () => {
  it('maps a listed subject to its name and any other to provider:subject, spelled out reversibly', () => {
    expect(signInUserId('login', 'alice-sub-1', users)).toBe('alice');
    expect(signInUserId('login', 'bob|42', users)).toBe('login:bob~7c42');
  });

  it('refuses a subject too long for an id instead of cutting two people down to one', () => {
    const prefix = 'x'.repeat(200);
    const first = signInUserId('login', `${prefix}-first`, users);
    const second = signInUserId('login', `${prefix}-second`, users);
    expect([first, second]).toEqual([undefined, undefined]);
    // The longest that fits is taken whole.
    const fits = 'y'.repeat(128 - 'login:'.length);
    expect(signInUserId('login', fits, users)).toBe(`login:${fits}`);
    expect(signInUserId('login', `${fits}y`, users)).toBeUndefined();
  });

  it('keeps proxy names from passing for chat ids or the local user', () => {
    expect(proxyUserId('U0ALICE01', users)).toBe('web:U0ALICE01');
    expect(proxyUserId('local', users)).toBe('web:local');
    expect(proxyUserId('carol', users)).toBe('carol');
    expect(proxyUserId('a:b', users)).toBeUndefined();
  });
});

describe('withPeople: the approvers a tool plan names, as people', () => {
  const table = {
    alice: { sub: [], slack: ['U0ALICE01'], discord: [] },
    bob: {
      sub: [],
      slack: ['U0BOB0001'],
      discord: ['100000000000000002'],
      teams: ['0b0b0b0b-0000-4000-8000-000000000002'],
    },
    carol: { sub: [], slack: [], discord: [] },
  };
  const ask = {
    decision: 'ask' as const,
    reason: 'policy',
    approvers: ['bob', 'carol', 'U0STRANGER'],
    timeoutMs: 60_000,
  };

  it("adds each listed approver's other ids and names them, the requester too; leaves unlisted ids alone", () => {
    const plan = withPeople(ask, 'U0ALICE01', table);
    expect(plan.approvers).toEqual([
      'bob',
      'U0BOB0001',
      '100000000000000002',
      'teams:0b0b0b0b-0000-4000-8000-000000000002',
      'carol',
      'U0STRANGER',
    ]);
    expect(plan.people).toEqual({
      bob: 'bob',
      U0BOB0001: 'bob',
      '100000000000000002': 'bob',
      'teams:0b0b0b0b-0000-4000-8000-000000000002': 'bob',
      alice: 'alice',
      U0ALICE01: 'alice',
    });
  });

  it("brings an escalation's people too: each of their ids may decide, and counts once", () => {
    const plan = withPeople({ ...ask, escalate: { afterMs: 60_000, to: ['U0BOB0001'] } }, 'U0ALICE01', table);
    expect(plan.escalate?.to).toEqual([
      'U0BOB0001',
      'bob',
      '100000000000000002',
      'teams:0b0b0b0b-0000-4000-8000-000000000002',
    ]);
    expect(plan.people?.['100000000000000002']).toBe('bob');
  });

  it('keeps an approver written as a chat id first, so channels mention them as the policy does', () => {
    expect(withPeople({ ...ask, approvers: ['U0BOB0001'] }, 'carol', table).approvers[0]).toBe('U0BOB0001');
  });

  it('changes nothing of a plan that does not ask, nor when nobody has several ids', () => {
    const auto = { ...ask, decision: 'auto' as const };
    expect(withPeople(auto, 'U0ALICE01', table)).toBe(auto);
    expect(withPeople({ ...ask, approvers: ['carol'] }, 'carol', table)).toEqual({
      ...ask,
      approvers: ['carol'],
    });
  });
});
