/**
 * The words every channel shows about a gate come from one module (common/gates/words.ts): each channel picks only
 * how a person and a time are written. And no channel keeps copies of its own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  choiceLabels,
  describeOutcome,
  grantWords,
  typedAnswerHint,
  typedDecisionHint,
  type Voice,
} from '../../common/gates/words';
import type { ApprovalGate, Gate, QuestionGate } from '../../workflows/session/contract';

const at = Date.UTC(2026, 10, 29, 14, 5);
const approval = (toolName: string, resolution?: ApprovalGate['resolution']): ApprovalGate => ({
  kind: 'approval',
  id: 'g1',
  toolCallId: 'c1',
  toolName,
  subject: 'rm -rf build',
  args: {},
  requesterId: 'alice',
  approvers: ['bob'],
  createdAt: at,
  expiresAt: null,
  status: resolution ? 'resolved' : 'pending',
  ...(resolution ? { resolution } : {}),
});

describe('the wording of gates', () => {
  it('says what happened in the same words whoever shows it; a channel picks only mentions and times', () => {
    const denied = approval('shell_execute', { outcome: 'denied', by: 'bob', at });
    expect(describeOutcome(denied)).toBe('denied by @bob at 14:05 UTC');
    const slackish: Voice = { mention: (id) => `<@${id}>`, time: () => 'in a while' };
    expect(describeOutcome(denied, slackish)).toBe('denied by <@bob> at in a while');
  });

  it('calls a budget continued or stopped, not approved or denied, in its outcome and on its buttons', () => {
    expect(describeOutcome(approval('budget', { outcome: 'approved', by: 'alice', at }))).toBe(
      'continued by @alice at 14:05 UTC',
    );
    expect(describeOutcome(approval('budget', { outcome: 'denied', by: 'alice', at }))).toBe(
      'stopped by @alice at 14:05 UTC',
    );
    expect(choiceLabels(true)).toEqual({ approve: 'Continue', deny: 'Stop' });
    expect(choiceLabels(false)).toEqual({ approve: 'Approve', deny: 'Deny' });
  });

  it('names every approver of a quorum, a declined question, an expiry and a grant', () => {
    const quorum = {
      ...approval('shell_execute', { outcome: 'approved', by: 'carol', at }),
      approvals: [
        { by: 'bob', at },
        { by: 'carol', at },
      ],
    };
    expect(describeOutcome(quorum)).toBe('approved by @bob and @carol at 14:05 UTC');
    const question = {
      kind: 'question',
      requesterId: 'alice',
      approvers: [],
      questions: [],
      resolution: { outcome: 'denied', by: 'alice', at },
    } as unknown as QuestionGate;
    expect(describeOutcome(question)).toBe('declined by @alice at 14:05 UTC');
    const expired = approval('shell_execute', { outcome: 'expired', by: 'system', at });
    expect(describeOutcome(expired as Gate)).toBe('expired at 14:05 UTC: nobody decided');
    expect(grantWords({ pattern: 'git status', scope: 'user' })).toBe('“git status”, everywhere');
    expect(grantWords({ scope: 'session' })).toBe('every call, in this conversation');
  });

  it('tells how to answer by typing, with each channel marking what to type', () => {
    expect(typedDecisionHint((text) => `\`${text}\``)).toBe(
      'You can also reply `approve` or `deny <reason>`.',
    );
    expect(
      typedAnswerHint([
        { label: 'Size', prompt: 'Which?', options: [{ label: 'S' }, { label: 'M' }], multi_select: false },
      ] as never),
    ).toBe('Reply with a number');
  });

  it('is the only place the web client takes gate words from: no copies in the page', () => {
    const dir = path.resolve(__dirname, '../../gateways/web/client');
    // A budget gate is told by isBudgetGate, not by its pseudo-tool's name; outcomes and hints by the module.
    const copies =
      /toolName [!=]== ['"]budget|Approved by|Denied by|Always allowed|Expired: nobody|Or type|in the chat\./;
    const offenders = readdirSync(dir)
      .filter((file) => /\.tsx?$/.test(file))
      .filter((file) => copies.test(readFileSync(path.join(dir, file), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
