/**
 * Live views without polling. `watchView` is an update that waits until the session's view moves past the
 * version a gateway already shows (or this run is about to continue as new) and then says so, with the new
 * version. The gateway reads the view itself with the `state` query only then, and watches again.
 *
 * Why an update: a waiting handler costs the worker nothing until something changes (no timer, no task),
 * the server holds the caller's long poll, and a watch accepted before a worker restart or a cache eviction
 * is rebuilt by replay, so nothing is missed. It returns the version, not the view: every completed update
 * writes its result into history, and the view carries the whole transcript.
 *
 * History stays bounded: a watch is written only when accepted and when it ends (one per visible change per
 * watching gateway), a gateway holds one watch per session (a newer one from it ends its older one), at
 * most MAX_VIEW_WATCHES are open at once (the oldest, typically a restarted gateway's, gives way), and
 * continue-as-new ends them all first, since it waits for every handler to finish.
 */
import { HandlerUnfinishedPolicy } from '@temporalio/common';
import * as wf from '@temporalio/workflow';

export interface ViewWatchRequest {
  /** The run whose view the gateway shows: another run's view is news at once. */
  runId: string;
  /** The view version the gateway shows (-1: none yet). */
  sinceVersion: number;
  /** The watching gateway process: its newer watch replaces its older one. */
  watcher: string;
}

export interface ViewWatchResult {
  runId: string;
  version: number;
  /** Set when the watch ended without news: `continuing` (watch again in a moment) or `replaced`. */
  reconnect?: 'continuing' | 'replaced';
}

/** An update, not a signal: the gateway waits for its answer. Not a query: a query cannot wait. */
export const watchViewUpdate = wf.defineUpdate<ViewWatchResult, [ViewWatchRequest]>('watchView');

/** Below the server's default of 10 updates in flight per workflow, so room remains for new watches. */
export const MAX_VIEW_WATCHES = 6;
const MAX_ID_LENGTH = 128;

/** Checked in the validator: a refused watch writes nothing into history. */
export function viewWatchProblem(request: unknown): string | undefined {
  const r = request as Partial<ViewWatchRequest> | undefined;
  if (typeof r !== 'object' || r === null) return 'the watch request must be an object';
  if (typeof r.runId !== 'string' || r.runId.length > MAX_ID_LENGTH) return 'runId must be a string';
  if (!Number.isInteger(r.sinceVersion) || (r.sinceVersion as number) < -1)
    return 'sinceVersion must be an integer >= -1';
  if (typeof r.watcher !== 'string' || !r.watcher || r.watcher.length > MAX_ID_LENGTH)
    return 'watcher must be a non-empty string';
  return undefined;
}

/**
 * Serves `watchView` for a view whose `version` grows with every visible change. `closing` is true once
 * this run is about to continue as new: open watches end (the gateway watches the next run) and new ones
 * are refused until then.
 */
export function serveViewWatches(view: { readonly version: number }, closing: () => boolean): void {
  /** Open watches by watcher, oldest first: each can be ended early with a reason. */
  const open = new Map<string, { end?: 'replaced' }>();
  wf.setHandler(
    watchViewUpdate,
    async (request) => {
      const { runId } = wf.workflowInfo();
      const mine: { end?: 'replaced' } = {};
      const older = open.get(request.watcher);
      if (older) older.end = 'replaced';
      open.delete(request.watcher);
      open.set(request.watcher, mine);
      if (open.size > MAX_VIEW_WATCHES) {
        const [oldestWatcher, oldest] = open.entries().next().value!;
        oldest.end = 'replaced';
        open.delete(oldestWatcher);
      }
      try {
        await wf.condition(
          () =>
            request.runId !== runId ||
            view.version > request.sinceVersion ||
            mine.end !== undefined ||
            closing(),
        );
      } finally {
        if (open.get(request.watcher) === mine) open.delete(request.watcher);
      }
      const news = request.runId !== runId || view.version > request.sinceVersion;
      if (news) return { runId, version: view.version };
      return { runId, version: view.version, reconnect: mine.end ?? 'continuing' };
    },
    {
      validator: (request) => {
        const problem = viewWatchProblem(request);
        if (problem) throw new Error(problem);
        if (closing()) throw new Error('continuing as new: watch again in a moment');
      },
      // A run that ends (a mission run, a cancelled session) leaves nobody waiting: the callers see it ended.
      unfinishedPolicy: HandlerUnfinishedPolicy.ABANDON,
      description: 'Waits until the view changes past sinceVersion; answers with the new version.',
    },
  );
}
