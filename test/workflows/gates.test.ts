import { describe, expect, it } from 'vitest';
import { checkToolArgs, shellExecuteTool } from '../../common/tools/definitions';
import type { Decision } from '../../workflows/session/contract';
import {
  cancelGate,
  expireGate,
  resolveGate,
  supersedeGate,
  escalate,
  evaluateDecision,
  keepTypedReply,
  openApprovalGate,
  parseTypedDecision,
  resultWithoutRun,
  mergeDraft,
} from '../../workflows/session/gates';
import { approvalProgress, decidersLine, describeWaiting, describeOutcome } from '../../common/gates/words';
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

/** A gate under four-eyes (`selfApprove: false`) and/or a quorum (`approvals: n`). */
function guarded(rules: { selfApprove?: boolean; approvalsNeeded?: number }, approvers = ['bob', 'carol']) {
  return openApprovalGate({
    id: 'g1',
    toolCallId: 'c1',
    toolName: 'shell_execute',
    args: { command: 'ls' },
    subject: 'ls',
    requesterId: 'alice',
    approvers,
    now: NOW,
    timeoutMs: 60_000,
    ...rules,
  });
}

/** Applies a decision the way the workflow does: a counted approval is kept, a resolution ends the gate. */
function apply(g: ReturnType<typeof gate>, decision: Partial<Decision>, at = NOW + 1000) {
  const check = evaluateDecision({
    gate: g,
    decision: { gateId: 'g1', choice: 'approve', userId: 'alice', ...decision },
    now: at,
    checkArgs: (args) => checkToolArgs(shellExecuteTool, args),
    newGrantId: () => 'grant-1',
    sessionId: 'session:web:s',
  });
  if (check.ok) {
    g.approvals = check.approvals;
    if (check.resolution) {
      g.status = 'resolved';
      g.resolution = check.resolution;
    }
  }
  return check;
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
      notice:
        'This shell_execute call was already approved by @bob on the web at 14:05 UTC. Nothing changed.',
    });
  });

  it('says where the decision was made, from the decider id alone', () => {
    const g = gate();
    g.status = 'resolved';
    for (const [by, where] of [
      ['U07ABCDEF', 'in Slack'],
      ['123456789012345678', 'in Discord'],
      ['operator:olga', 'with agentctl'],
      ['oidc:abc', 'on the web'],
    ]) {
      g.resolution = { outcome: 'denied', by: by!, at: NOW };
      expect(decide(g, { choice: 'approve' })).toMatchObject({
        notice: `This shell_execute call was already denied by @${by} ${where} at 14:05 UTC. Nothing changed.`,
      });
    }
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

  it('makes an always-allow grant for the requester of exactly the call shown, or of the pattern they wrote', () => {
    const session = decide(gate(), { choice: 'always' });
    expect(session).toMatchObject({
      ok: true,
      resolution: {
        grant: {
          id: 'grant-1',
          userId: 'alice',
          scope: 'session',
          sessionId: 'session:web:s',
          pattern: 'ls',
        },
      },
    });
    // Never a bare tool grant from a button: a blank pattern is exactly this call too.
    expect(decide(gate(), { choice: 'always', pattern: '  ' })).toMatchObject({
      resolution: { grant: { pattern: 'ls' } },
    });
    const user = decide(gate(), { choice: 'always', scope: 'user', pattern: 'ls *', userId: 'bob' });
    expect(user).toMatchObject({
      ok: true,
      resolution: { by: 'bob', grant: { userId: 'alice', scope: 'user', pattern: 'ls *' } },
    });
    expect(user.ok && user.resolution?.grant?.sessionId).toBeUndefined();
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

describe('one person, several ids (the users table: web, Slack, Discord, Teams)', () => {
  // withPeople (activities/tool-plans.ts) expands the approvers to each person's ids and names them.
  const people = {
    alice: 'alice',
    U_ALICE1: 'alice',
    bob: 'bob',
    U_BOB1: 'bob',
    'teams:b0b': 'bob',
  };
  const multi = (rules: { selfApprove?: boolean; approvalsNeeded?: number }) =>
    openApprovalGate({
      id: 'g1',
      toolCallId: 'c1',
      toolName: 'shell_execute',
      args: { command: 'ls' },
      subject: 'ls',
      requesterId: 'U_ALICE1',
      approvers: ['bob', 'U_BOB1', 'teams:b0b', 'carol'],
      people,
      now: NOW,
      timeoutMs: 60_000,
      ...rules,
    });

  it('counts a person once in a quorum, whichever of their ids approves again', () => {
    const g = multi({ approvalsNeeded: 2 });
    expect(apply(g, { userId: 'teams:b0b' })).toMatchObject({ ok: true });
    const again = apply(g, { userId: 'bob' });
    expect(again).toMatchObject({ ok: false, notice: expect.stringContaining('You already approved') });
    expect(apply(g, { userId: 'U_BOB1' })).toMatchObject({ ok: false });
    expect(g.approvals).toHaveLength(1);
    expect(g.status).toBe('pending');
    expect(approvalProgress(g)).toBe('1 of 2 approvals: @bob');
    expect(apply(g, { userId: 'carol' })).toMatchObject({ ok: true, resolution: { outcome: 'approved' } });
  });

  it('keeps four-eyes across ids: the requester approves from none of theirs, and may deny from any', () => {
    const g = multi({ selfApprove: false });
    for (const id of ['U_ALICE1', 'alice'])
      expect(apply(g, { userId: id })).toMatchObject({
        ok: false,
        notice: expect.stringContaining('someone else must approve'),
      });
    expect(decidersLine(g)).toBe(
      'Needs approval from @bob, @carol (not @U_ALICE1, who asked: they may only deny it).',
    );
    expect(apply(g, { userId: 'alice', choice: 'deny' })).toMatchObject({
      ok: true,
      resolution: { outcome: 'denied', by: 'alice' },
    });
  });

  it('lists each person once among who may decide, and lets an approver decide by any of their ids', () => {
    const g = multi({});
    expect(decidersLine(g)).toBe('Who may decide: @U_ALICE1, @bob, @carol.');
    expect(apply(g, { userId: 'U_BOB1' })).toMatchObject({ ok: true, resolution: { outcome: 'approved' } });
  });

  it('keeps hand-overs to people: not to oneself by another id, not after approving by another id', () => {
    const g = multi({ approvalsNeeded: 2 });
    expect(apply(g, { userId: 'U_BOB1', choice: 'delegate', to: 'teams:b0b' })).toMatchObject({
      ok: false,
      notice: expect.stringContaining('to yourself'),
    });
    expect(apply(g, { userId: 'teams:b0b' })).toMatchObject({ ok: true });
    expect(apply(g, { userId: 'bob', choice: 'delegate', to: 'mallory' })).toMatchObject({
      ok: false,
      notice: expect.stringContaining('already approved'),
    });
    // Handing it to someone who may already decide (by another of their ids) adds no vote.
    expect(apply(g, { userId: 'carol', choice: 'delegate', to: 'U_BOB1' })).toMatchObject({ ok: false });
  });

  it('treats ids without a person as people of their own (gates opened before, or ids nobody listed)', () => {
    const g = guarded({ approvalsNeeded: 2 }, ['bob', 'U_BOB1']);
    expect(apply(g, { userId: 'bob' })).toMatchObject({ ok: true });
    expect(apply(g, { userId: 'U_BOB1' })).toMatchObject({ ok: true, resolution: { outcome: 'approved' } });
  });
});

describe('four-eyes and quorum', () => {
  it('refuses self-approval when selfApprove is false, says who may approve, and still lets the requester deny', () => {
    const g = guarded({ selfApprove: false });
    const refused = apply(g, { userId: 'alice' });
    expect(refused).toEqual({
      ok: false,
      notice:
        'You asked for this shell_execute call, so someone else must approve it (self-approval is off). Needs approval from @bob, @carol (not @alice, who asked: they may only deny it). You can still deny it. Nothing changed.',
    });
    expect(g.status).toBe('pending');
    expect(apply(g, { userId: 'alice', choice: 'edit', args: { command: 'ls -la' } })).toMatchObject({
      ok: false,
    });
    expect(apply(g, { userId: 'alice', choice: 'deny', reason: 'changed my mind' })).toMatchObject({
      ok: true,
      resolution: { outcome: 'denied', by: 'alice', reason: 'changed my mind' },
    });
  });

  it('lets another approver approve a four-eyes call at once', () => {
    const g = guarded({ selfApprove: false });
    expect(apply(g, { userId: 'bob' })).toMatchObject({
      ok: true,
      resolution: { outcome: 'approved', by: 'bob' },
      approvals: [{ by: 'bob', at: NOW + 1000 }],
    });
  });

  it('says on the prompt that nobody can approve when no one but the requester is configured', () => {
    const g = guarded({ selfApprove: false }, ['alice']);
    expect(decidersLine(g)).toBe(
      'Nobody can approve this call: self-approval is off and no approver other than @alice is configured. It can only be denied or expire.',
    );
    expect(decidersLine(guarded({ approvalsNeeded: 3 }, ['bob']))).toContain('Nobody can approve this call');
    expect(apply(g, { userId: 'alice' })).toMatchObject({ ok: false });
  });

  it('counts distinct people for a quorum, shows "1 of 2 approvals: @bob", and resolves on the second', () => {
    const g = guarded({ approvalsNeeded: 2, selfApprove: false });
    expect(decidersLine(g)).toBe(
      'Needs 2 approvals from different people among @bob, @carol (not @alice, who asked: they may only deny it). 0 of 2 approvals.',
    );
    const first = apply(g, { userId: 'bob' });
    expect(first).toEqual({
      ok: true,
      approvals: [{ by: 'bob', at: NOW + 1000 }],
      notice:
        'Your approval of this shell_execute call is counted: 1 of 2 approvals: @bob. It runs after 1 more approval from someone else.',
    });
    expect(g.status).toBe('pending');
    expect(approvalProgress(g)).toBe('1 of 2 approvals: @bob');
    expect(decidersLine(g, (id) => `<@${id}>`)).toContain('1 of 2 approvals: <@bob>.');
    expect(apply(g, { userId: 'carol' }, NOW + 2000)).toMatchObject({
      ok: true,
      resolution: { outcome: 'approved', by: 'carol' },
    });
    expect(describeOutcome(g)).toBe('approved by @bob and @carol at 14:05 UTC');
  });

  it('lets the requester count as one of a quorum when self-approval is on', () => {
    const g = guarded({ approvalsNeeded: 2 });
    expect(apply(g, { userId: 'alice' })).toMatchObject({ ok: true, approvals: [{ by: 'alice' }] });
    expect(g.status).toBe('pending');
    expect(apply(g, { userId: 'bob' })).toMatchObject({ ok: true, resolution: { outcome: 'approved' } });
  });

  it('refuses a second approval by the same person with a note, and changes nothing', () => {
    const g = guarded({ approvalsNeeded: 2 });
    apply(g, { userId: 'bob' });
    const again = apply(g, { userId: 'bob' }, NOW + 5000);
    expect(again).toEqual({
      ok: false,
      notice:
        'You already approved this shell_execute call at 14:05 UTC; it needs 2 approvals from different people (1 of 2 approvals: @bob). Nothing changed.',
    });
    expect(g.approvals).toEqual([{ by: 'bob', at: NOW + 1000 }]);
    expect(g.status).toBe('pending');
  });

  it('ends a quorum on one deny, whatever approvals came before', () => {
    const g = guarded({ approvalsNeeded: 3 }, ['bob', 'carol', 'dave']);
    apply(g, { userId: 'bob' });
    apply(g, { userId: 'carol' });
    expect(apply(g, { userId: 'dave', choice: 'deny' })).toMatchObject({
      ok: true,
      resolution: { outcome: 'denied', by: 'dave' },
    });
    expect(g.status).toBe('resolved');
    expect(resultWithoutRun(g)).toMatchObject({ status: 'denied' });
  });

  it('refuses allow-always under a quorum or four-eyes, even from an approver, and edit under a quorum', () => {
    for (const rules of [{ approvalsNeeded: 2 }, { selfApprove: false }]) {
      const g = guarded(rules);
      const always = apply(g, { userId: 'bob', choice: 'always', scope: 'user' });
      expect(always).toMatchObject({
        ok: false,
        notice: expect.stringContaining('Always allow is not available'),
      });
      expect(g.approvals).toEqual([]);
    }
    const g = guarded({ approvalsNeeded: 2 });
    expect(apply(g, { userId: 'bob', choice: 'edit', args: { command: 'ls -la' } })).toMatchObject({
      ok: false,
      notice: expect.stringContaining('Edit & approve is not available'),
    });
  });

  it('counts an operator as one distinct approver, never as the requester', () => {
    const g = guarded({ approvalsNeeded: 2, selfApprove: false });
    expect(apply(g, { userId: 'olivia', operator: true })).toMatchObject({
      ok: true,
      approvals: [{ by: 'operator:olivia' }],
    });
    expect(apply(g, { userId: 'olivia', operator: true })).toMatchObject({ ok: false });
    expect(apply(g, { userId: 'bob' })).toMatchObject({ ok: true, resolution: { outcome: 'approved' } });
    expect(describeOutcome(g)).toContain('@operator:olivia and @bob');
  });

  it('keeps gates opened before quorum existed as they were: one approval by the requester decides', () => {
    const old = gate();
    delete old.approvalsNeeded;
    delete old.selfApprove;
    delete old.approvals;
    expect(apply(old, { userId: 'alice' })).toMatchObject({ ok: true, resolution: { outcome: 'approved' } });
    expect(decidersLine(gate())).toBe('Who may decide: @alice, @bob.');
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

  it('moves a gate out of pending once, whichever transition comes first, and never back', () => {
    const g = gate();
    expect(describeWaiting([g])).toBe('approval of shell_execute (ls) from @alice or @bob');
    expect(expireGate(g, NOW + 1)).toBe(true);
    expect(resolveGate(g, { outcome: 'approved', by: 'bob', at: NOW + 2 })).toBe(false);
    expect(supersedeGate(g, 'alice', NOW + 3)).toBe(false);
    expect(cancelGate(g, NOW + 4)).toBe(false);
    expect(g).toMatchObject({
      status: 'expired',
      resolution: { outcome: 'expired', by: 'system', at: NOW + 1 },
    });
    const s = gate();
    expect(supersedeGate(s, 'alice', NOW)).toBe(true);
    expect(s).toMatchObject({ status: 'cancelled', resolution: { outcome: 'superseded', by: 'alice' } });
  });
});

describe('answer drafts', () => {
  const questions = [
    {
      label: 'Env',
      prompt: 'Where?',
      options: [{ label: 'staging' }, { label: 'prod' }],
      multi_select: false,
      allow_custom: false,
      required: true,
    },
    {
      label: 'Checks',
      prompt: 'Which?',
      options: [{ label: 'lint' }],
      multi_select: true,
      allow_custom: true,
      required: false,
    },
  ];

  it('keeps only answers to the gate’s own questions, newest per question, so a draft stays bounded', () => {
    let draft = mergeDraft(questions, [], [{ question: 'Env', selected: ['staging'] }]);
    for (let i = 0; i < 100; i++)
      draft = mergeDraft(questions, draft, [{ question: `bogus ${i}`, selected: ['x'] }]);
    draft = mergeDraft(questions, draft, [
      { question: 'Env', selected: ['prod'] },
      { question: 'Checks', selected: ['lint'] },
    ]);
    expect(draft).toEqual([
      { question: 'Env', selected: ['prod'] },
      { question: 'Checks', selected: ['lint'] },
    ]);
  });
});

describe('hand-overs and escalation keep four-eyes and quorum whole', () => {
  /** A hand-over applied as the workflow applies it: the person added, the hand-over recorded. */
  function handOver(g: ReturnType<typeof guarded>, by: string, to: string) {
    const check = decide(g, { choice: 'delegate', userId: by, to });
    if (check.ok && !check.resolution && check.delegateTo) {
      g.approvers = [...g.approvers, check.delegateTo];
      g.delegations = [...(g.delegations ?? []), { by, to: check.delegateTo, at: NOW }];
    }
    return check;
  }

  it('refuses a requester under four-eyes who tries to hand the approval to another account of theirs', () => {
    const g = guarded({ selfApprove: false });
    const check = handOver(g, 'alice', 'alice-second-account');
    expect(check).toMatchObject({ ok: false });
    expect(!check.ok && check.notice).toContain('you cannot hand its approval to someone else');
    expect(g.approvers).toEqual(['bob', 'carol']);
  });

  it('moves an approver’s vote instead of adding one: a quorum of two still needs two people', () => {
    const g = guarded({ approvalsNeeded: 2 }, ['bob', 'carol']);
    const bob = apply(g, { userId: 'bob' });
    expect(bob.ok && bob.resolution).toBeUndefined();
    // Bob's vote is used: he cannot hand it to a second account of his and vote again through it.
    const after = handOver(g, 'bob', 'bob2');
    expect(!after.ok && after.notice).toContain('already approved');
    // Carol hands hers to Dave, and may no longer approve herself; Dave's approval completes the quorum.
    expect(handOver(g, 'carol', 'dave')).toMatchObject({ ok: true, delegateTo: 'dave' });
    const carol = decide(g, { userId: 'carol' });
    expect(!carol.ok && carol.notice).toContain('You handed this shell_execute call to @dave');
    expect(decidersLine(g)).toBe(
      'Needs 2 approvals from different people among @alice, @bob, @dave. 1 of 2 approvals: @bob.',
    );
    expect(apply(g, { userId: 'dave' })).toMatchObject({
      ok: true,
      resolution: { outcome: 'approved', by: 'dave' },
    });
  });

  it('refuses a hand-over to nobody, to oneself, or to someone who may already decide', () => {
    const g = gate();
    for (const [to, fragment] of [
      [undefined, 'Hand it to whom?'],
      ['alice', 'to yourself'],
      ['bob', '@bob may already decide'],
    ] as const) {
      const check = decide(g, { choice: 'delegate', userId: 'alice', ...(to ? { to } : {}) });
      expect(!check.ok && check.notice, String(to)).toContain(fragment);
    }
  });

  it('escalates once, at its time, adding only people who could not decide yet', () => {
    const g = openApprovalGate({
      id: 'g1',
      toolCallId: 'c1',
      toolName: 'http_request',
      args: {},
      subject: 'POST https://example.com',
      requesterId: 'alice',
      approvers: ['bob'],
      now: NOW,
      timeoutMs: 'never',
      escalate: { afterMs: 2 * 3_600_000, to: ['bob', 'carol'] },
    });
    expect(escalate(g, NOW + 3_600_000)).toBeUndefined();
    expect(g.approvers).toEqual(['bob']);
    expect(escalate(g, NOW + 2 * 3_600_000)).toBe(
      'Nobody decided this http_request call within 120 min: @carol is asked too.',
    );
    expect(g.approvers).toEqual(['bob', 'carol']);
    expect(escalate(g, NOW + 3 * 3_600_000)).toBeUndefined();
  });
});

describe('typed replies kept on a gate', () => {
  it('keeps what was typed, bounded in count and length, so a flood cannot grow the conversation', () => {
    const g = gate();
    keepTypedReply(g, { userId: 'alice', text: 'deny ' + 'x'.repeat(600) }, NOW);
    expect(g.typed![0]!.text).toHaveLength(501);
    expect(g.typed![0]!.text.endsWith('…')).toBe(true);
    for (let i = 0; i < 15; i++) keepTypedReply(g, { userId: 'bob', text: `approve ${i}` }, NOW);
    expect(g.typed).toHaveLength(10);
    expect(g.typed!.at(-1)).toEqual({ by: 'bob', text: 'approve 8', at: NOW });
  });
});
