/**
 * One session's live view in this gateway process. One loop reads the view, keeps one `watchView` waiting in
 * the workflow (workflows/session/view-watch.ts) and hands every new view to all of this session's open tabs,
 * so a session costs one watch however many tabs show it, and nothing while it is idle. Nothing here is
 * needed for correctness: a new feed starts again from what the server knows.
 */
import {
  isGrpcServiceError,
  ServiceError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import type { Logger } from '../../infra/log';
import type { SessionView } from '../../workflows/session/contract';
import type { ViewWatchRequest, ViewWatchResult } from '../../workflows/session/view-watch';
import type { SessionRunInfo } from '../sessions';

export type FeedEvent =
  { type: 'state'; view: SessionView } | { type: 'not-found' } | { type: 'unavailable' };

/** What a feed asks of Temporal (gateways/sessions.ts). */
export interface FeedTemporal {
  currentRun(workflowId: string): Promise<SessionRunInfo | undefined>;
  state(workflowId: string, runId?: string): Promise<SessionView>;
  watchView(workflowId: string, request: ViewWatchRequest, signal: AbortSignal): Promise<ViewWatchResult>;
}

/** Waits, in ms. A session not started yet is looked for again soon; a message sent here looks at once. */
export const FEED_TIMING = {
  absentFirst: 500,
  absentMax: 5_000,
  /** Temporal unreachable, or a read that failed. */
  retryFirst: 500,
  retryMax: 15_000,
  /** A run that has ended (terminated, or a mission run): a new run may be started by a message. */
  closedRecheck: 30_000,
  /** The run was about to continue as new: the next run takes the watch. */
  continuing: 250,
  /** Another gateway took this watch's place (more gateways than MAX_VIEW_WATCHES watch this session). */
  replaced: 1_000,
  /** After a message or click sent through this gateway: if no new view came by then, read it once. */
  nudgeCheck: 2_500,
  /** Servers that refuse updates (older self-hosted Temporal): the view is read this often instead. */
  pollFallback: 2_000,
};

type Listener = (event: FeedEvent) => void;

export class SessionFeed {
  private readonly listeners = new Set<Listener>();
  private latest: FeedEvent | undefined;
  private lastPublishAt = 0;
  private readonly abort = new AbortController();
  private wakeUp: (() => void) | undefined;
  private nudgeTimer: NodeJS.Timeout | undefined;
  private pollOnly = false;
  private retryWait = FEED_TIMING.retryFirst;

  constructor(
    readonly workflowId: string,
    private readonly temporal: FeedTemporal,
    private readonly watcher: string,
    private readonly log: Logger,
  ) {}

  get size(): number {
    return this.listeners.size;
  }

  get closed(): boolean {
    return this.abort.signal.aborted;
  }

  /** A new tab gets what the others show at once. */
  add(listener: Listener): void {
    this.listeners.add(listener);
    if (this.latest) listener(this.latest);
  }

  remove(listener: Listener): void {
    this.listeners.delete(listener);
  }

  start(): void {
    void this.run().catch((error: unknown) => {
      this.log.error('live view stopped', { workflowId: this.workflowId, error: String(error) });
    });
  }

  close(): void {
    this.abort.abort();
    clearTimeout(this.nudgeTimer);
    this.wakeUp?.();
  }

  /**
   * Something was sent to this session through this gateway: a session that had not started is looked for
   * now, and if no new view arrives soon (no worker is running) the view is read once, so the page can say so.
   */
  nudge(): void {
    this.wakeUp?.();
    if (this.nudgeTimer || this.closed) return;
    const nudgedAt = Date.now();
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = undefined;
      if (this.lastPublishAt < nudgedAt && !this.closed) void this.read(undefined);
    }, FEED_TIMING.nudgeCheck);
    this.nudgeTimer.unref();
  }

  private publish(event: FeedEvent): void {
    if (this.closed) return;
    // A problem that is still the same problem is not news; every view read is (tabs drop repeats).
    if (event.type !== 'state' && this.latest?.type === event.type) return;
    this.latest = event;
    this.lastPublishAt = Date.now();
    for (const listener of this.listeners) listener(event);
  }

  private async run(): Promise<void> {
    let absentWait = FEED_TIMING.absentFirst;
    while (!this.closed) {
      let current: SessionRunInfo | undefined;
      try {
        current = await this.temporal.currentRun(this.workflowId);
      } catch {
        this.publish({ type: 'unavailable' });
        await this.backOff();
        continue;
      }
      if (!current) {
        this.publish({ type: 'not-found' });
        await this.pause(absentWait);
        absentWait = Math.min(absentWait * 2, FEED_TIMING.absentMax);
        continue;
      }
      absentWait = FEED_TIMING.absentFirst;
      await this.follow(current);
    }
  }

  /** Shows one run and follows its changes; returns when the run should be looked up again. */
  private async follow(current: SessionRunInfo): Promise<void> {
    let since = { runId: current.runId, version: (await this.read(current.runId)) ?? -1 };
    if (!current.running) return await this.pause(FEED_TIMING.closedRecheck);
    while (!this.closed) {
      if (this.pollOnly) {
        await this.pause(FEED_TIMING.pollFallback);
        if (!this.closed) await this.read(undefined);
        continue;
      }
      let result: ViewWatchResult;
      try {
        result = await this.temporal.watchView(
          this.workflowId,
          { runId: since.runId, sinceVersion: since.version, watcher: this.watcher },
          this.abort.signal,
        );
      } catch (error) {
        if (this.closed) return;
        if (updatesRefused(error)) {
          this.log.warn(
            'this Temporal server refuses workflow updates, so the web chat reads each open session every 2 s: enable them (frontend.enableUpdateWorkflowExecution) for live views without polling',
            { workflowId: this.workflowId },
          );
          this.pollOnly = true;
          continue;
        }
        // Refused (the run is about to continue as new) or ended: look the run up again.
        if (error instanceof WorkflowUpdateFailedError) return await this.pause(FEED_TIMING.continuing);
        if (error instanceof WorkflowNotFoundError) return;
        this.publish({ type: 'unavailable' });
        return await this.backOff();
      }
      // Without news: the run is about to continue as new (look up the next one), or another gateway's watch
      // took this one's place (watch again, a little later, so several gateways do not take turns too fast).
      if (result.reconnect === 'continuing') return await this.pause(FEED_TIMING.continuing);
      if (result.reconnect === 'replaced') {
        await this.pause(FEED_TIMING.replaced);
        continue;
      }
      const version = await this.read(result.runId);
      if (version === undefined) {
        await this.backOff();
        continue;
      }
      this.retryWait = FEED_TIMING.retryFirst;
      since = { runId: result.runId, version };
    }
  }

  /** Reads and shows the view (of a run, or the latest one); its version, or undefined when it could not. */
  private async read(runId: string | undefined): Promise<number | undefined> {
    try {
      const view = await this.temporal.state(this.workflowId, runId);
      this.publish({ type: 'state', view });
      return view.version;
    } catch (error) {
      this.publish(error instanceof WorkflowNotFoundError ? { type: 'not-found' } : { type: 'unavailable' });
      return undefined;
    }
  }

  /** Waits longer after each failure in a row (reset by a view read after a watch). */
  private async backOff(): Promise<void> {
    await this.pause(this.retryWait);
    this.retryWait = Math.min(this.retryWait * 2, FEED_TIMING.retryMax);
  }

  /** Resolves after `ms`, or at once on a nudge or close. */
  private pause(ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wakeUp === done) this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.wakeUp = done;
    });
  }
}

/** PERMISSION_DENIED (updates disabled on the namespace) or UNIMPLEMENTED (a server before updates). */
function updatesRefused(error: unknown): boolean {
  const cause = error instanceof ServiceError ? error.cause : undefined;
  return isGrpcServiceError(cause) && (cause.code === 7 || cause.code === 12);
}
