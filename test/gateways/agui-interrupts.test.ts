/**
 * Every gate kind as an AG-UI interrupt, valid by `@ag-ui/core`'s own schema, and every resume entry turned into the
 * decision a click would send, or refused in words: budget, four-eyes, a sign-in, a tool server's question.
 */
import { InterruptSchema } from '@ag-ui/core/schemas';
import { describe, expect, it } from 'vitest';
import { BUDGET_GATE } from '../../common/gates/words';
import { checkCoverage, gateInterrupt, resumeAction } from '../../gateways/agui/interrupts';
import type { ApprovalGate, CredentialGate, QuestionGate } from '../../workflows/session/contract';

const NOW = Date.UTC(2026, 10, 29, 12, 0);
const connect = (provider: string) => `https://agent.example/oauth/${provider}/start?ticket=t`;

const approval = (extra: Partial<ApprovalGate> = {}): ApprovalGate => ({
  id: 'g-approval',
  kind: 'approval',
  toolCallId: 'call-1',
  toolName: 'shell_execute',
  args: { command: 'ls' },
  subject: 'ls',
  requesterId: 'alice',
  approvers: ['bob'],
  createdAt: NOW,
  expiresAt: NOW + 3_600_000,
  status: 'pending',
  ...extra,
});
const question: QuestionGate = {
  id: 'g-question',
  kind: 'question',
  toolCallId: 'call-2',
  toolName: 'ask_user',
  questions: [
    {
      label: 'Env',
      prompt: 'Where to deploy?',
      options: [{ label: 'staging' }, { label: 'production' }],
      multi_select: false,
      allow_custom: false,
      required: true,
    },
    {
      label: 'Notes',
      prompt: 'Anything else?',
      options: [],
      multi_select: false,
      allow_custom: true,
      required: false,
    },
  ],
  requesterId: 'alice',
  approvers: [],
  createdAt: NOW,
  expiresAt: null,
  status: 'pending',
};
const credential: CredentialGate = {
  id: 'g-credential',
  kind: 'credential',
  toolCallId: 'call-3',
  toolName: 'http_request',
  provider: 'acme',
  providerName: 'Acme Files',
  credentialKind: 'oauth2',
  requesterId: 'alice',
  approvers: [],
  createdAt: NOW,
  expiresAt: NOW + 3_600_000,
  status: 'pending',
};

describe('gates as AG-UI interrupts', () => {
  it('offers an approval’s choices as every channel does, and each interrupt is valid AG-UI', () => {
    const open = gateInterrupt(approval(), 'alice', connect);
    expect(InterruptSchema.safeParse(open).success).toBe(true);
    expect(open).toMatchObject({
      id: 'g-approval',
      reason: 'tool_approval',
      toolCallId: 'call-1',
      expiresAt: new Date(NOW + 3_600_000).toISOString(),
      metadata: { choices: ['approve', 'deny', 'always', 'edit'], mayDecide: true },
    });
    // Four-eyes: no Always allow; a quorum: no Edit either. A budget: Continue or Stop, with no tool call.
    expect(gateInterrupt(approval({ selfApprove: false }), 'bob', connect).metadata).toMatchObject({
      choices: ['approve', 'deny', 'edit'],
    });
    expect(gateInterrupt(approval({ approvalsNeeded: 2 }), 'bob', connect).metadata).toMatchObject({
      choices: ['approve', 'deny'],
    });
    // Under four-eyes the requester may only deny: that is all they are offered, and an approval is refused here.
    expect(gateInterrupt(approval({ selfApprove: false }), 'alice', connect).metadata).toMatchObject({
      choices: ['deny'],
    });
    expect(
      resumeAction(
        approval({ selfApprove: false }),
        { interruptId: 'g-approval', status: 'resolved', payload: { choice: 'approve' } },
        'alice',
        NOW,
      ),
    ).toMatchObject({ kind: 'refused', code: 'interrupt_payload_invalid' });
    const budget = gateInterrupt(
      approval({ toolName: BUDGET_GATE, subject: '$5.00 spent' }),
      'alice',
      connect,
    );
    expect(InterruptSchema.safeParse(budget).success).toBe(true);
    expect(budget).toMatchObject({
      reason: 'budget_approval',
      message: expect.stringContaining('Budget reached'),
    });
    expect(budget.toolCallId).toBeUndefined();
    expect(JSON.stringify(budget.responseSchema)).toContain('"title":"Continue"');
  });

  it('gives a sign-in’s Connect link to its requester only, and a question its own schema', () => {
    const own = gateInterrupt(credential, 'alice', connect);
    expect(InterruptSchema.safeParse(own).success).toBe(true);
    expect(own).toMatchObject({
      reason: 'auth_required',
      metadata: { connectUrl: connect('acme'), mayDecide: true },
    });
    expect(gateInterrupt(credential, 'bob', connect).metadata).not.toHaveProperty('connectUrl');
    const asked = gateInterrupt(question, 'alice', connect);
    expect(InterruptSchema.safeParse(asked).success).toBe(true);
    expect(asked.responseSchema).toMatchObject({
      required: ['Env'],
      properties: { Env: { enum: ['staging', 'production'] }, Notes: { type: 'string' } },
    });
    const server = gateInterrupt(
      { ...question, asks: { server: 'files', message: 'Which folder?', fields: [] } },
      'alice',
      connect,
    );
    expect(server).toMatchObject({
      reason: 'tool_server_input',
      message: expect.stringContaining('files asks @alice'),
    });
  });
});

describe('resume entries as decisions', () => {
  it('turns each entry into the decision or answer a click sends', () => {
    expect(
      resumeAction(
        approval(),
        { interruptId: 'g-approval', status: 'resolved', payload: { choice: 'approve' } },
        'alice',
        NOW,
      ),
    ).toEqual({
      kind: 'decide',
      decision: { gateId: 'g-approval', choice: 'approve' },
    });
    expect(
      resumeAction(
        approval(),
        {
          interruptId: 'g-approval',
          status: 'resolved',
          payload: { choice: 'always', scope: 'user', pattern: 'ls*' },
        },
        'alice',
        NOW,
      ),
    ).toEqual({
      kind: 'decide',
      decision: { gateId: 'g-approval', choice: 'always', scope: 'user', pattern: 'ls*' },
    });
    expect(
      resumeAction(approval(), { interruptId: 'g-approval', status: 'cancelled' }, 'alice', NOW),
    ).toMatchObject({
      kind: 'decide',
      decision: { choice: 'deny' },
    });
    expect(
      resumeAction(
        question,
        { interruptId: 'g-question', status: 'resolved', payload: { Env: 'staging', Notes: 'soon' } },
        'alice',
        NOW,
      ),
    ).toEqual({
      kind: 'answer',
      answers: [
        { question: 'Env', selected: ['staging'] },
        { question: 'Notes', selected: [], custom: 'soon' },
      ],
    });
    // The model's question cancelled ends the turn (Stop); a tool server's is declined.
    expect(resumeAction(question, { interruptId: 'g-question', status: 'cancelled' }, 'alice', NOW)).toEqual({
      kind: 'stop',
    });
    expect(
      resumeAction(
        { ...question, asks: { server: 'files', message: 'm', fields: [] } },
        { interruptId: 'g-question', status: 'cancelled' },
        'alice',
        NOW,
      ),
    ).toMatchObject({ kind: 'decide', decision: { choice: 'deny' } });
  });

  it('refuses in words what a click would be refused, before anything is sent', () => {
    const refused = (action: ReturnType<typeof resumeAction>) =>
      action.kind === 'refused' ? action.code : action.kind;
    // Not this person's gate; a choice the gate does not offer; an edit without arguments; a wrong answer.
    expect(
      refused(
        resumeAction(
          approval(),
          { interruptId: 'g-approval', status: 'resolved', payload: { choice: 'approve' } },
          'mallory',
          NOW,
        ),
      ),
    ).toBe('interrupt_not_yours');
    expect(
      refused(
        resumeAction(
          approval({ approvalsNeeded: 2 }),
          { interruptId: 'g-approval', status: 'resolved', payload: { choice: 'always' } },
          'bob',
          NOW,
        ),
      ),
    ).toBe('interrupt_payload_invalid');
    expect(
      refused(
        resumeAction(
          approval(),
          { interruptId: 'g-approval', status: 'resolved', payload: { choice: 'edit' } },
          'alice',
          NOW,
        ),
      ),
    ).toBe('interrupt_payload_invalid');
    expect(
      refused(
        resumeAction(
          question,
          { interruptId: 'g-question', status: 'resolved', payload: { Env: 'moon' } },
          'alice',
          NOW,
        ),
      ),
    ).toBe('interrupt_payload_invalid');
    // A sign-in is done at its link, not in the resume; only its requester cancels it.
    expect(
      refused(resumeAction(credential, { interruptId: 'g-credential', status: 'resolved' }, 'alice', NOW)),
    ).toBe('sign_in_not_done');
    expect(
      refused(resumeAction(credential, { interruptId: 'g-credential', status: 'cancelled' }, 'bob', NOW)),
    ).toBe('interrupt_not_yours');
    expect(
      refused(
        resumeAction(
          { ...credential, status: 'resolved', resolution: { outcome: 'connected', by: 'alice', at: NOW } },
          { interruptId: 'g-credential', status: 'resolved' },
          'alice',
          NOW,
        ),
      ),
    ).toBe('nothing');
    // Expired, or decided meanwhile: who decided, and when.
    expect(
      refused(
        resumeAction(
          approval({ expiresAt: NOW - 1 }),
          { interruptId: 'g-approval', status: 'resolved', payload: { choice: 'approve' } },
          'alice',
          NOW,
        ),
      ),
    ).toBe('interrupt_expired');
    const decided = resumeAction(
      approval({
        status: 'resolved',
        resolution: { outcome: 'approved', by: 'bob', at: NOW },
        approvals: [{ by: 'bob', at: NOW }],
      }),
      { interruptId: 'g-approval', status: 'resolved', payload: { choice: 'approve' } },
      'alice',
      NOW,
    );
    expect(decided).toEqual({
      kind: 'refused',
      code: 'interrupt_already_decided',
      message: 'This shell_execute call was already approved by @bob on the web at 12:00 UTC.',
    });
  });

  it('bounds what a resume may carry: edited arguments, answers', () => {
    const huge = { command: 'x'.repeat(20_000) };
    expect(
      resumeAction(
        approval(),
        { interruptId: 'g-approval', status: 'resolved', payload: { choice: 'edit', args: huge } },
        'alice',
        NOW,
      ),
    ).toMatchObject({ kind: 'refused', code: 'interrupt_payload_invalid' });
    expect(
      resumeAction(
        question,
        {
          interruptId: 'g-question',
          status: 'resolved',
          payload: { Env: 'staging', Notes: 'y'.repeat(2_001) },
        },
        'alice',
        NOW,
      ),
    ).toMatchObject({ kind: 'refused', code: 'interrupt_payload_invalid' });
  });

  it('keeps to the coverage rule: every open interrupt once, nothing unknown', () => {
    const all = [approval(), question];
    expect(checkCoverage([{ interruptId: 'g-approval', status: 'resolved' }], all, all)?.code).toBe(
      'interrupts_unanswered',
    );
    expect(
      checkCoverage(
        [
          { interruptId: 'g-approval', status: 'resolved' },
          { interruptId: 'g-approval', status: 'resolved' },
        ],
        [approval()],
        all,
      )?.code,
    ).toBe('interrupt_duplicate');
    expect(checkCoverage([{ interruptId: 'x', status: 'resolved' }], [], all)?.code).toBe(
      'interrupt_unknown',
    );
    expect(
      checkCoverage(
        [
          { interruptId: 'g-approval', status: 'resolved' },
          { interruptId: 'g-question', status: 'cancelled' },
        ],
        all,
        all,
      ),
    ).toBeUndefined();
  });
});
