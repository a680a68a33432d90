/**
 * What a waiting workflow publishes of its open gates (workflows/session/gate-memo.ts), with no Temporal: the memo
 * entries "Needs you" shows and the ids `AgentDeciders` is filtered by.
 */
import { describe, expect, it } from 'vitest';
import type { ApprovalGate, CredentialGate, Gate, QuestionGate } from '../../workflows/session/contract';
import { gateDeciders, gateMemos } from '../../workflows/session/gate-memo';
import { readMemoGates } from '../../gateways/web/inbox-memo';

const base = {
  toolCallId: 'c',
  requesterId: 'alice',
  approvers: ['bob', 'U0BOB0001'],
  createdAt: 1,
  expiresAt: null,
  status: 'pending' as const,
};
const approval: ApprovalGate = {
  ...base,
  id: 'a',
  kind: 'approval',
  toolName: 'shell_execute',
  args: { command: 'ls' },
  subject: 'ls',
  posts: ['slack:C1:1.2'],
  typed: [{ by: 'alice', text: 'approve', at: 2 }],
};
const question: QuestionGate = {
  ...base,
  id: 'q',
  kind: 'question',
  toolName: 'ask_user',
  questions: [
    { label: 'Env', prompt: 'Where?', options: [], multi_select: false, allow_custom: true, required: true },
  ],
  drafts: { bob: [] },
};
const credential: CredentialGate = {
  ...base,
  id: 'k',
  kind: 'credential',
  toolName: 'http_request',
  provider: 'acme',
  providerName: 'Acme',
  credentialKind: 'oauth2',
};

describe('the open gates a workflow publishes', () => {
  it('names everyone who may decide an open gate, once each; a sign-in only its requester', () => {
    expect(gateDeciders([approval, question])).toEqual(['U0BOB0001', 'alice', 'bob']);
    expect(gateDeciders([{ ...credential, requesterId: 'carol' }])).toEqual(['carol']);
    expect(gateDeciders([{ ...approval, status: 'resolved' }])).toEqual([]);
  });

  it("leaves a mission run's gate shown in its owner's conversation to the run itself", () => {
    expect(
      gateDeciders([{ ...approval, remote: { workflowId: 'mission-run:x:1', missionName: 'n' } }]),
    ).toEqual([]);
  });

  it('keeps in the memo what the inbox shows, not the posts, typed replies or half-filled answers', () => {
    const memo = gateMemos([approval, question, credential]);
    expect(memo.a).toMatchObject({
      requesterId: 'alice',
      approvers: base.approvers,
      args: { command: 'ls' },
    });
    expect(memo.a).not.toHaveProperty('posts');
    expect(memo.a).not.toHaveProperty('typed');
    expect(memo.q).not.toHaveProperty('drafts');
    expect(memo.k).toMatchObject({ kind: 'credential', providerName: 'Acme' });
  });

  it('reads back what it wrote, counting what another shape or the limit left out', () => {
    const gates: Gate[] = Array.from({ length: 12 }, (_, i) => ({ ...approval, id: `g${i}` }));
    const read = readMemoGates({ gates: gateMemos(gates), gatesOpen: 12, missionName: 'nightly' });
    expect(read.gates.map((g) => g.id)).toEqual(gates.slice(2).map((g) => g.id));
    expect(read).toMatchObject({ current: true, notKept: 2, malformed: 0, missionName: 'nightly' });
    // An entry of an older version (no requester): left out, and the memo not trusted to be complete.
    const old = readMemoGates({ gates: { a: { kind: 'approval', toolName: 't', argsChars: 2 } } });
    expect(old).toMatchObject({ current: false, gates: [], malformed: 1 });
    expect(readMemoGates(undefined)).toMatchObject({ current: false, gates: [] });
  });
});
