/**
 * Moving a running workflow to the current Worker Deployment version (docs/VERSIONING.md).
 *
 * Every workflow type is PINNED: a run finishes on the version that started it, so a deploy never replays a
 * history on code that did not write it. The worker says so for all of them (`defaultVersioningBehavior`,
 * workers/run-worker.ts): a behaviour declared on a workflow function would make every unversioned worker
 * (`TEMPORAL_WORKER_VERSIONING=off`, the tests' workers) fail its workflow tasks. Long-lived workflows (conversations, mission runs, missions, the per-user
 * and mission directories) move to the current version at their next continue-as-new, which carries everything the
 * next run needs (transcript, open gates, grants, records). Every continue-as-new asks for the current version
 * (`AUTO_UPGRADE` for the first task of the next run), and the `upgrade` signal asks a workflow to continue as new
 * at its next safe point: the worker's drain sweep sends it to every workflow pinned to another version.
 */
import * as wf from '@temporalio/workflow';

/** Sent by the drain sweep (workers/drain.ts); a signal, so it is accepted while the old version's workers are down. */
export const upgradeSignal = wf.defineSignal('upgrade');

/** Whether the sweep asked this run to move: one flag per workflow (module state is per workflow). */
let requested = false;

export function listenForUpgrade(): void {
  wf.setHandler(upgradeSignal, () => {
    requested = true;
  });
}

export function upgradeRequested(): boolean {
  return requested;
}

/** `continueAsNew` whose next run starts on the task queue's current version (then pinned there). */
export function continueOnCurrentVersion<F extends wf.Workflow>(...args: Parameters<F>): Promise<never> {
  return wf.makeContinueAsNewFunc<F>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(...args);
}

/**
 * Whether a long-lived workflow should continue as new at its next safe point: a deploy asked it to move, the server
 * suggests it, or its history passed `events`.
 */
export function timeToContinue(events: number): boolean {
  const info = wf.workflowInfo();
  return upgradeRequested() || info.continueAsNewSuggested || info.historyLength > events;
}
