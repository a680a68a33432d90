/**
 * A mission fired over A2A is a task too. A message with a data part `{"mission": "<name or id>"}` fires the mission
 * as the caller, exactly as mission_fire would (the missions they may see, the same refusals); its task id is
 * `mission-<missionId>.<messageId>`, and the fire carries `a2a:<caller>:<messageId>` as its id, so the mission takes it
 * once however often it is sent, and the task finds its run by it: nothing about it is held in a gateway.
 *
 * - submitted until the mission starts the run; rejected when it skipped the fire (with the mission's reason);
 * - while the run goes on, its owner (and the policy's approvers) read it as a conversation's turn: working,
 *   input-required with its gates as interrupts (a resume decides them, as the run's own conversation would),
 *   auth-required; anyone else who fired a shared mission sees it working, as the run acts as its owner;
 * - completed, failed or canceled as the mission recorded the run's end, with its summary as the answer (what
 *   mission_history shows whoever may see the mission).
 */
import { Role, TaskState, type Part, type Task } from '@a2a-js/sdk';
import type { Client } from '@temporalio/client';
import { missionWorkflowId } from '../../common/ids';
import type { MissionAddress } from '../../common/missions/addressing';
import type { MissionRecord } from '../../common/missions/types';
import type { AppConfig } from '../../infra/config';
import { withinDeadline } from '../../infra/temporal/deadline';
import { MissionTools } from '../../activities/missions';
import { missionViewQuery, type MissionView, type RunRecord } from '../../workflows/missions/contract';
import { stateQuery, type SessionView } from '../../workflows/session/contract';
import { taskIdOf } from './tasks';

/** What the A2A handler does with missions: fire one as a person, read one, read a run's conversation once. */
export interface A2aMissions {
  fireFor(
    userId: string,
    address: MissionAddress,
    fireId: string,
    context?: string,
  ): Promise<{ ok: true; record: MissionRecord; said: string } | { ok: false; error: string }>;
  view(missionId: string): Promise<MissionView>;
  /** A run's conversation as it ended (a query of a closed workflow; the live feed follows running ones). */
  runView(workflowId: string): Promise<SessionView>;
}

const READ_DEADLINE_MS = 10_000;

export function a2aMissions(client: Client, config: AppConfig): A2aMissions {
  const tools = new MissionTools(client, config);
  return {
    fireFor: (userId, address, fireId, context) =>
      withinDeadline(client, 30_000, () => tools.fireFor(userId, address, fireId, context)),
    view: (missionId) =>
      withinDeadline(client, READ_DEADLINE_MS, () =>
        client.workflow.getHandle(missionWorkflowId(missionId)).query(missionViewQuery),
      ),
    runView: (workflowId) =>
      withinDeadline(client, READ_DEADLINE_MS, () => client.workflow.getHandle(workflowId).query(stateQuery)),
  };
}

const MISSION_CONTEXT = /^mission-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The mission a task's context names, or undefined for a conversation's context. */
export function missionOfContext(contextId: string): string | undefined {
  return MISSION_CONTEXT.exec(contextId)?.[1];
}

export const missionContextId = (missionId: string) => `mission-${missionId}`;
export const missionFireId = (userId: string, messageId: string) => `a2a:${userId}:${messageId}`;
export { missionWorkflowId };

const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

/** Where a mission task stands, from the mission alone (its run's own view adds the detail for its owner). */
export type MissionTaskStand =
  | { kind: 'unknown' }
  | { kind: 'queued' }
  | { kind: 'skipped'; reason: string }
  | { kind: 'run'; run: RunRecord };

export function standOf(view: MissionView, fireId: string): MissionTaskStand {
  const run = view.runs.find((r) => r.fireId === fireId);
  if (run) return { kind: 'run', run };
  const skipped = view.skipped.find((s) => s.fireId === fireId);
  if (skipped) return { kind: 'skipped', reason: skipped.reason };
  return view.fireIds?.includes(fireId) ? { kind: 'queued' } : { kind: 'unknown' };
}

/** A mission task told from the mission's record: before its run, its refusal, or its run as the record has it. */
export function recordedTask(
  view: MissionView,
  contextId: string,
  messageId: string,
  stand: Exclude<MissionTaskStand, { kind: 'unknown' }>,
): Task {
  const taskId = taskIdOf(contextId, messageId);
  const label = `"${view.name}"`;
  let state: TaskState;
  let says: string;
  let answer: string | undefined;
  if (stand.kind === 'queued') {
    state = TaskState.TASK_STATE_SUBMITTED;
    says = `${label} took the fire; its run starts in a moment.`;
  } else if (stand.kind === 'skipped') {
    state = TaskState.TASK_STATE_REJECTED;
    says = `${label} did not start a run: ${stand.reason}.`;
  } else {
    const { run } = stand;
    if (run.endedAt === undefined) {
      state = TaskState.TASK_STATE_WORKING;
      says = `Run ${run.n} of ${label} is going; it acts as @${view.ownerId}, whose approvals and sign-ins it waits for.`;
    } else {
      state =
        run.outcome === 'ok'
          ? TaskState.TASK_STATE_COMPLETED
          : run.outcome === 'cancelled'
            ? TaskState.TASK_STATE_CANCELED
            : TaskState.TASK_STATE_FAILED;
      says = `Run ${run.n} of ${label} ${run.outcome === 'ok' ? 'is done' : run.outcome === 'cancelled' ? 'was cancelled' : 'failed'}.`;
      answer = run.summary;
    }
  }
  const at = stand.kind === 'run' ? (stand.run.endedAt ?? stand.run.startedAt) : Date.now();
  return {
    id: taskId,
    contextId,
    status: {
      state,
      message: {
        messageId: `${taskId}.mission.${state}`,
        contextId,
        taskId,
        role: Role.ROLE_AGENT,
        parts: [text(answer ? `${says}\n\n${answer}` : says)],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      timestamp: new Date(at).toISOString(),
    },
    artifacts:
      answer && state === TaskState.TASK_STATE_COMPLETED
        ? [
            {
              artifactId: `${taskId}.answer`,
              name: 'answer',
              description: "The mission run's result",
              parts: [text(answer)],
              metadata: undefined,
              extensions: [],
            },
          ]
        : [],
    history: [],
    metadata: {
      mission: view.name,
      missionId: view.id,
      ...(stand.kind === 'run' ? { run: stand.run.n } : {}),
    },
  };
}
