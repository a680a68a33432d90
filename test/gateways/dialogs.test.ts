/**
 * What a gate's dialogs are built from while no worker runs: the memo the workflow keeps when a gate opens,
 * and the arguments as the Edit & approve dialogs show them, with the fallback for arguments too large.
 */
import { describe, expect, it } from 'vitest';
import { answerModal, DISCORD_ARGS_LIMIT, editModal } from '../../platforms/discord/render';
import { argsTooLarge, editableArgs } from '../../gateways/dialog-args';
import { SLACK_ARGS_LIMIT } from '../../platforms/slack/render';
import type { ApprovalGate, QuestionGate } from '../../workflows/session/contract';
import {
  GATE_MEMO_KEY,
  gateMemos,
  MAX_MEMO_ARGS_CHARS,
  readGateMemo,
} from '../../workflows/session/gate-memo';

const base = {
  toolCallId: 'c',
  requesterId: 'U1',
  approvers: [],
  createdAt: 0,
  expiresAt: null,
  status: 'pending' as const,
};
const approval = (id: string, args: Record<string, unknown>): ApprovalGate => ({
  ...base,
  id,
  kind: 'approval',
  toolName: 'shell_execute',
  args,
  subject: 's',
});
const question: QuestionGate = {
  ...base,
  id: 'q',
  kind: 'question',
  toolName: 'ask_user',
  questions: [
    {
      label: 'Environment',
      prompt: 'Where?',
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
};

describe('the gate memo', () => {
  it('keeps the full arguments and the questions, read back by gate id', () => {
    const memo = { [GATE_MEMO_KEY]: gateMemos([approval('a', { command: 'ls -la' }), question]) };
    expect(readGateMemo(memo, 'a')).toEqual({
      kind: 'approval',
      toolName: 'shell_execute',
      args: { command: 'ls -la' },
      argsChars: 20,
    });
    expect(readGateMemo(memo, 'q')).toEqual({ kind: 'question', questions: question.questions });
    expect(readGateMemo(memo, 'missing')).toBeUndefined();
    expect(readGateMemo({ [GATE_MEMO_KEY]: { a: { kind: 'approval' } } }, 'a')).toBeUndefined();
  });

  it('leaves out arguments too large for any dialog, saying how large, and keeps only the newest gates', () => {
    const huge = gateMemos([approval('h', { command: 'x'.repeat(MAX_MEMO_ARGS_CHARS) })]).h!;
    expect(huge).toMatchObject({
      kind: 'approval',
      toolName: 'shell_execute',
      argsChars: MAX_MEMO_ARGS_CHARS + 14,
    });
    expect(huge).not.toHaveProperty('args');
    expect(readGateMemo({ [GATE_MEMO_KEY]: { h: huge } }, 'h')).toEqual({
      kind: 'approval',
      toolName: 'shell_execute',
      argsChars: MAX_MEMO_ARGS_CHARS + 14,
    });
    const many = gateMemos(Array.from({ length: 15 }, (_, i) => approval(`g${i}`, {})));
    expect(Object.keys(many)).toEqual(Array.from({ length: 10 }, (_, i) => `g${i + 5}`));
  });
});

describe('arguments in an Edit & approve dialog', () => {
  it('shows pretty JSON, compact JSON when only that fits, and nothing when neither does', () => {
    expect(editableArgs({ a: 1 }, SLACK_ARGS_LIMIT)).toBe('{\n  "a": 1\n}');
    const wide = { list: Array.from({ length: 700 }, (_, i) => i) };
    expect(JSON.stringify(wide, null, 2).length).toBeGreaterThan(SLACK_ARGS_LIMIT);
    expect(editableArgs(wide, SLACK_ARGS_LIMIT)).toBe(JSON.stringify(wide));
    expect(editableArgs({ command: 'x'.repeat(SLACK_ARGS_LIMIT) }, SLACK_ARGS_LIMIT)).toBeUndefined();
    expect(editableArgs(undefined, SLACK_ARGS_LIMIT)).toBeUndefined();
  });

  it('tells the clicker what to do with arguments too large for the dialog', () => {
    expect(argsTooLarge('shell_execute', 12_345, SLACK_ARGS_LIMIT)).toBe(
      'The arguments of shell_execute are 12,345 characters, more than this dialog holds (3,000): Approve or Deny them as they are, or edit them in the web chat or with `agentctl resolve`.',
    );
  });

  it("builds Discord's dialogs from the memo alone, within its limits", () => {
    const edit = editModal('12345678901234567890', { id: 'a', toolName: 'shell_execute', args: '{"a":1}' });
    expect(edit.components[0]).toMatchObject({
      component: { custom_id: 'args', value: '{"a":1}', max_length: DISCORD_ARGS_LIMIT },
    });
    const answer = answerModal('12345678901234567890', { id: 'q', questions: question.questions });
    expect(answer.components.map((c) => ('label' in c ? c.label : ''))).toEqual([
      '1. Environment',
      '2. Notes',
    ]);
  });
});
