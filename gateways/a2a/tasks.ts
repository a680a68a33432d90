/**
 * A conversation's turns as A2A tasks. Pure: the route reads the conversation's view (a query of its workflow, on
 * any gateway) and this says what each task is. Nothing about a task lives in the gateway: its id names the
 * conversation and the message that started the turn, so any gateway instance answers any task, days later.
 *
 * - contextId: the web conversation (the same id the web app shows).
 * - taskId: `<contextId>.<messageId>`, the person's message that started the turn.
 * - state: working while the turn runs; input-required while it waits on a gate this caller may answer (an approval,
 *   a question, a budget, a tool server's question), auth-required while it waits on their sign-in; completed with
 *   the turn's answer; canceled when it was stopped. A gate that waits on someone else keeps it working, and its
 *   status message says who.
 */
import { Role, TaskState, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';
import type { Interrupt } from '@ag-ui/core';
import { describeWaiting, promptHeadline } from '../../common/gates/words';
import { mayActOn } from '../../common/gates/deciders';
import type { Gate, Message as TranscriptMessage, SessionView } from '../../workflows/session/contract';

const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The conversation and the message a task id names, or undefined for an id this server never made. */
export function parseTaskId(taskId: string): { contextId: string; messageId: string } | undefined {
  const [contextId, messageId, ...rest] = taskId.split('.');
  if (rest.length || !contextId || !messageId || !ID.test(contextId) || !ID.test(messageId)) return undefined;
  return { contextId, messageId };
}

export const taskIdOf = (contextId: string, messageId: string) => `${contextId}.${messageId}`;

/** A gate waiting on this person: one they may act on and have not (an approval of several they gave counts). */
export function waitsOn(gate: Gate, userId: string): boolean {
  if (!mayActOn(gate, userId)) return false;
  return !(gate.kind === 'approval' && gate.approvals?.some((a) => a.by === userId));
}

export const TERMINAL: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
/** States in which a blocking call returns: the task ended, or it waits on the caller. */
export const SETTLED: ReadonlySet<TaskState> = new Set([
  ...TERMINAL,
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

export interface TaskRead {
  task: Task;
  /** The gates this caller may answer now (what an input-required or auth-required task carries). */
  open: Gate[];
}

const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});
const data = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

function a2aMessage(
  m: Extract<TranscriptMessage, { role: 'user' | 'assistant' }>,
  contextId: string,
  taskId: string,
): Message {
  return {
    messageId: m.id,
    contextId,
    taskId,
    role: m.role === 'user' ? Role.ROLE_USER : Role.ROLE_AGENT,
    parts: [text(m.text)],
    metadata: m.role === 'user' ? { userId: m.userId } : undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/**
 * The task `messageId` started in this view, as `userId` sees it (the gates they may answer, a Connect link only
 * their own), or undefined when the conversation has no such message (not yet taken, or never sent).
 */
export function readTask(
  view: SessionView,
  contextId: string,
  messageId: string,
  userId: string,
  interrupt: (gate: Gate) => Interrupt,
  /** The task's own id, when it is not `<contextId>.<messageId>` (a mission task names its fire, not the run's message). */
  taskId = taskIdOf(contextId, messageId),
): TaskRead | undefined {
  const transcript = view.transcript;
  const start = transcript.findIndex((m) => m.role === 'user' && m.id === messageId);
  if (start < 0) return undefined;
  const next = transcript.findIndex((m, i) => i > start && m.role === 'user');
  const end = next < 0 ? transcript.length : next;
  const turn = transcript.slice(start, end);
  const startedAt = transcript[start]!.at;
  const endedAt = next < 0 ? Infinity : transcript[next]!.at;
  const gates = view.gates.filter((g) => g.createdAt >= startedAt && g.createdAt < endedAt);
  const answers = turn.filter(
    (m): m is Extract<TranscriptMessage, { role: 'assistant' }> =>
      m.role === 'assistant' && !!m.text.trim() && !m.summary,
  );
  const history = turn
    .filter((m): m is Extract<TranscriptMessage, { role: 'user' | 'assistant' }> => m.role !== 'tool')
    .filter((m) => m.role === 'user' || (!!m.text.trim() && !m.summary))
    .map((m) => a2aMessage(m, contextId, taskId));
  const latest = next < 0;
  const pending = latest ? gates.filter((g) => g.status === 'pending') : [];
  const open = pending.filter((g) => waitsOn(g, userId));
  const stopped = answers.some((m) => m.stopped) || gates.some((g) => g.resolution?.outcome === 'stopped');

  let state: TaskState;
  let says: Part[] = [];
  if (open.length) {
    state = open.every((g) => g.kind === 'credential')
      ? TaskState.TASK_STATE_AUTH_REQUIRED
      : TaskState.TASK_STATE_INPUT_REQUIRED;
    says = [text(open.map((g) => promptHeadline(g)).join('\n')), data({ interrupts: open.map(interrupt) })];
  } else if (pending.length) {
    // Waiting on someone else: still working from this caller's side, and the status says on whom.
    state = TaskState.TASK_STATE_WORKING;
    says = [text(`Waiting for ${describeWaiting(pending)}.`)];
  } else if (latest && (view.status === 'running' || view.queued > 0)) {
    state = TaskState.TASK_STATE_WORKING;
  } else {
    state = stopped ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_COMPLETED;
    const last = answers.at(-1);
    if (last) says = [text(last.text)];
  }
  const artifacts: Artifact[] =
    state === TaskState.TASK_STATE_COMPLETED && answers.length
      ? [
          {
            artifactId: `${taskId}.answer`,
            name: 'answer',
            description: "The agent's answer to this message",
            parts: [text(answers.map((m) => m.text).join('\n\n'))],
            metadata: undefined,
            extensions: [],
          },
        ]
      : [];
  const status = {
    state,
    message: says.length
      ? {
          messageId: `${taskId}.status.${view.version}`,
          contextId,
          taskId,
          role: Role.ROLE_AGENT,
          parts: says,
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        }
      : undefined,
    timestamp: new Date(turn.at(-1)?.at ?? startedAt).toISOString(),
  };
  return {
    task: { id: taskId, contextId, status, artifacts, history, metadata: undefined },
    open,
  };
}

/** A task the conversation has taken but not started yet (the message waits in its queue). */
export function submittedTask(contextId: string, messageId: string, why?: string): Task {
  const taskId = taskIdOf(contextId, messageId);
  return {
    id: taskId,
    contextId,
    status: {
      state: TaskState.TASK_STATE_SUBMITTED,
      message: why
        ? {
            messageId: `${taskId}.queued`,
            contextId,
            taskId,
            role: Role.ROLE_AGENT,
            parts: [text(why)],
            metadata: undefined,
            extensions: [],
            referenceTaskIds: [],
          }
        : undefined,
      timestamp: new Date().toISOString(),
    },
    artifacts: [],
    history: [],
    metadata: undefined,
  };
}

/** The task's history cut to the latest `length` messages, as GetTask's historyLength asks (0: none). */
export function withHistoryLength(task: Task, length: number | undefined): Task {
  if (length === undefined) return task;
  return { ...task, history: length <= 0 ? [] : task.history.slice(-length) };
}
