/**
 * A deploy's drain as Temporal's own batch operation: one batch signal (`upgrade`) over the visibility query "running
 * on version X of this task queue", sent by the server at the pace an operator sets (`WORKER_DRAIN_RATE` per
 * second). Its job id names the move (deployment, from, to), so however many workers of the current version sweep,
 * the server runs one job per move and each workflow gets the signal once; the job's own counts are the progress
 * `agentctl deploy status` shows. Nothing here lists workflows: the cost is a count per version, whatever is parked.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { quoted, unlessNotFound, versionKey, type DeploymentVersion } from './deployment';
import { upgradeSignal } from '../../workflows/upgrade';

const ALREADY_EXISTS = 6;
const RESOURCE_EXHAUSTED = 8;
const STATE = temporal.api.enums.v1.BatchOperationState;
/** How long a run may take to show in visibility (or to be pinned after it started): a follow-up looks back this far. */
export const VISIBILITY_LAG_MS = 15_000;

export interface DrainMove {
  /** The task queue drained: two task queues of one deployment name drain apart. */
  taskQueue: string;
  deploymentName: string;
  from: string;
  to: string;
}

export interface DrainProgress {
  jobId: string;
  state: 'running' | 'completed' | 'failed' | 'unknown';
  /** Workflows signalled so far, and how many the job found when it started. */
  signalled: number;
  total: number;
  failed: number;
  startedAt: Date | undefined;
  /** Signals a second since the job started (its pace, as measured). */
  rate: number | undefined;
}

/** Running workflows of this task queue pinned to `version`, optionally started after a moment. */
export function onVersionQuery(taskQueue: string, version: DeploymentVersion, startedAfter?: Date): string {
  return [
    `ExecutionStatus = 'Running'`,
    `TaskQueue = ${quoted(taskQueue)}`,
    `TemporalWorkerDeploymentVersion = ${quoted(versionKey(version))}`,
    ...(startedAfter ? [`StartTime > ${quoted(startedAfter.toISOString())}`] : []),
  ].join(' AND ');
}

/** Where a follow-up of a job started at `startedAt` looks from (and so its job id). */
export const followUpWindow = (startedAt: Date): Date => new Date(startedAt.getTime() - VISIBILITY_LAG_MS);

/** The job id of a move: the same on every worker, so the server runs it once. `after`: a follow-up's window. */
export function drainJobId(move: DrainMove, after?: Date): string {
  const base = `drain:${move.taskQueue}:${move.deploymentName}:${move.from}:to:${move.to}`;
  return after ? `${base}:after:${after.getTime()}` : base;
}

export async function countOnVersion(
  client: Client,
  namespace: string,
  taskQueue: string,
  version: DeploymentVersion,
  startedAfter?: Date,
): Promise<number> {
  const reply = await client.workflowService.countWorkflowExecutions({
    namespace,
    query: onVersionQuery(taskQueue, version, startedAfter),
  });
  return Number(reply.count ?? 0);
}

export async function describeDrain(
  client: Client,
  namespace: string,
  jobId: string,
): Promise<DrainProgress | undefined> {
  const reply = await unlessNotFound(client.workflowService.describeBatchOperation({ namespace, jobId }));
  if (!reply) return undefined;
  const startedAt = reply.startTime?.seconds ? new Date(Number(reply.startTime.seconds) * 1000) : undefined;
  const signalled = Number(reply.completeOperationCount ?? 0);
  const seconds = startedAt ? (Date.now() - startedAt.getTime()) / 1000 : 0;
  const state =
    reply.state === STATE.BATCH_OPERATION_STATE_RUNNING
      ? 'running'
      : reply.state === STATE.BATCH_OPERATION_STATE_COMPLETED
        ? 'completed'
        : reply.state === STATE.BATCH_OPERATION_STATE_FAILED
          ? 'failed'
          : 'unknown';
  return {
    jobId,
    state,
    signalled,
    total: Number(reply.totalOperationCount ?? 0),
    failed: Number(reply.failureOperationCount ?? 0),
    startedAt,
    rate: seconds > 1 && state === 'running' ? signalled / seconds : undefined,
  };
}

export type DrainStart = 'started' | 'running elsewhere' | 'busy';

/**
 * Starts the batch signal of a move (or its follow-up) unless the server already has it: a second worker's start of
 * the same job id is refused by the server, which is what makes the drain once per deployment. 'busy': the namespace
 * runs as many batch operations as it allows (the dev server: one); the next sweep tries again.
 */
export async function startDrain(
  client: Client,
  namespace: string,
  move: DrainMove,
  options: { ratePerSecond: number; identity: string; after?: Date },
): Promise<DrainStart> {
  const from = { deploymentName: move.deploymentName, buildId: move.from };
  try {
    await client.workflowService.startBatchOperation({
      namespace,
      jobId: drainJobId(move, options.after),
      visibilityQuery: onVersionQuery(move.taskQueue, from, options.after),
      reason: `deploy: move from ${move.from} to ${move.to}`,
      maxOperationsPerSecond: options.ratePerSecond,
      signalOperation: { signal: upgradeSignal.name, identity: options.identity },
    });
    return 'started';
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === ALREADY_EXISTS) return 'running elsewhere';
    if (code === RESOURCE_EXHAUSTED) return 'busy';
    throw error;
  }
}

/**
 * Makes sure a move is being drained, once: its job runs or ran (then only workflows pinned to `from` after that job
 * started, which it could not see, get a follow-up job of their own). Returns the newest job's progress.
 */
export async function ensureDrain(
  client: Client,
  namespace: string,
  move: DrainMove,
  options: { ratePerSecond: number; identity: string },
): Promise<{ progress: DrainProgress | undefined; started: DrainStart | undefined }> {
  let after: Date | undefined;
  for (;;) {
    const jobId = drainJobId(move, after);
    const progress = await describeDrain(client, namespace, jobId);
    if (!progress) {
      const started = await startDrain(client, namespace, move, { ...options, after });
      return { progress: await describeDrain(client, namespace, jobId), started };
    }
    if (progress.state === 'running' || !progress.startedAt) return { progress, started: undefined };
    // Finished: what it signalled moves at its own next safe point. A run it could not see (pinned to `from` since
    // it started, or not yet in visibility when it listed) gets a follow-up job, which looks back VISIBILITY_LAG_MS
    // before that start and begins no sooner than that long after it: a run still waiting to move is asked at
    // most twice, and follow-ups come at most that often.
    const since = followUpWindow(progress.startedAt);
    if (Date.now() - progress.startedAt.getTime() < VISIBILITY_LAG_MS)
      return { progress, started: undefined };
    const from = { deploymentName: move.deploymentName, buildId: move.from };
    if (!(await countOnVersion(client, namespace, move.taskQueue, from, since)))
      return { progress, started: undefined };
    after = since;
  }
}

/** The newest job of a move (each follow-up's id carries the window the job before it left). */
export async function newestDrain(
  client: Client,
  namespace: string,
  move: DrainMove,
): Promise<DrainProgress | undefined> {
  let newest: DrainProgress | undefined;
  for (let after: Date | undefined; ;) {
    const progress = await describeDrain(client, namespace, drainJobId(move, after));
    if (!progress) return newest;
    newest = progress;
    if (progress.state === 'running' || !progress.startedAt) return newest;
    after = followUpWindow(progress.startedAt);
  }
}
