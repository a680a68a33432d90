/**
 * A conversation's turns as A2A tasks (gateways/a2a/tasks.ts), from views as the workflow shows them: which state a
 * task is in for which caller, what it carries, and which task ids this server made.
 */
import { TaskState } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { parseTaskId, readTask, taskIdOf } from '../../gateways/a2a/tasks';
import type { Gate, SessionView } from '../../workflows/session/contract';

const base = {
  toolCallId: 'c1',
  approvers: [] as string[],
  createdAt: 150,
  expiresAt: null,
  status: 'pending' as const,
};
const signIn: Gate = {
  ...base,
  id: 'g-sign',
  kind: 'credential',
  requesterId: 'alice',
  toolName: 'http_request',
  provider: 'acme',
  providerName: 'Acme Files',
  credentialKind: 'oauth2',
};
const approval: Gate = {
  ...base,
  id: 'g-ok',
  kind: 'approval',
  requesterId: 'alice',
  approvers: ['bob'],
  toolName: 'shell_execute',
  args: { command: 'ls' },
  subject: 'ls',
  approvalsNeeded: 2,
  selfApprove: true,
};

function viewWith(gates: Gate[], extra: Partial<SessionView> = {}): SessionView {
  return {
    sessionId: 'web:c',
    channel: 'web',
    ownerId: 'alice',
    status: 'idle',
    version: 3,
    transcript: [
      { role: 'user', id: 'm1', userId: 'alice', text: 'first', at: 100 },
      { role: 'assistant', id: 'a1', text: 'on it', toolCalls: [], at: 120 },
    ],
    gates,
    grants: [],
    notices: [],
    queued: 0,
    ...extra,
  };
}

const interrupt = (g: Gate) => ({ id: g.id, reason: g.kind, message: g.id });
const read = (view: SessionView, user = 'alice') => readTask(view, 'c', 'm1', user, interrupt)!;

describe('A2A tasks from a conversation', () => {
  it('is auth-required for the person whose sign-in it waits on, and working for anyone else', () => {
    const view = viewWith([signIn]);
    expect(read(view).task.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    expect(read(view).open.map((g) => g.id)).toEqual(['g-sign']);
    const other = read(view, 'bob').task;
    expect(other.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(JSON.stringify(other.status?.message)).toContain('@alice to connect Acme Files');
  });

  it('stops asking a person whose approval of several is counted, and says whom it waits for', () => {
    const counted = { ...approval, approvals: [{ by: 'alice', at: 160 }] } as Gate;
    expect(read(viewWith([approval])).task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const waiting = read(viewWith([counted])).task;
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(read(viewWith([counted]), 'bob').task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it('completes with the answer, is canceled when stopped, and an older turn is done whatever is open now', () => {
    const done = read(viewWith([])).task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'on it' });
    const stopped = viewWith([
      { ...approval, status: 'resolved', resolution: { outcome: 'stopped', by: 'alice', at: 170 } } as Gate,
    ]);
    expect(read(stopped).task.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const later = viewWith([{ ...signIn, createdAt: 250 }], {
      transcript: [
        ...viewWith([]).transcript,
        { role: 'user', id: 'm2', userId: 'alice', text: 'second', at: 200 },
      ],
    });
    expect(read(later).task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(readTask(later, 'c', 'm2', 'alice', interrupt)!.task.status?.state).toBe(
      TaskState.TASK_STATE_AUTH_REQUIRED,
    );
    expect(readTask(later, 'c', 'nope', 'alice', interrupt)).toBeUndefined();
  });

  it('makes task ids from a conversation and a message, and takes no other', () => {
    expect(parseTaskId(taskIdOf('web-1', 'm_2'))).toEqual({ contextId: 'web-1', messageId: 'm_2' });
    for (const id of ['', 'a', 'a.b.c', '../a.b', 'a.', '.b', `${'x'.repeat(65)}.b`])
      expect(parseTaskId(id)).toBeUndefined();
  });
});
