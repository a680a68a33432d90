/**
 * The live views of this gateway process: at most one feed (and so one watch) per session, shared by every
 * tab that shows it. A feed outlives its last tab briefly, so a reload or a tab switch reuses its watch.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../infra/log';
import { SessionFeed, type FeedEvent, type FeedTemporal } from './view-feed';

const KEEP_IDLE_FEED_MS = 15_000;

export class LiveViews {
  private readonly feeds = new Map<string, { feed: SessionFeed; idle?: NodeJS.Timeout }>();
  /** This process, as the workflows see it: its newer watch of a session replaces its older one. */
  readonly watcher = `gateway-${randomUUID()}`;

  constructor(
    private readonly temporal: FeedTemporal,
    private readonly log: Logger,
    private readonly keepIdleMs = KEEP_IDLE_FEED_MS,
  ) {}

  /** Delivers the session's view, and each change, to `listener` until the returned function is called. */
  subscribe(workflowId: string, listener: (event: FeedEvent) => void): () => void {
    let entry = this.feeds.get(workflowId);
    if (!entry) {
      entry = { feed: new SessionFeed(workflowId, this.temporal, this.watcher, this.log) };
      this.feeds.set(workflowId, entry);
      entry.feed.start();
    }
    clearTimeout(entry.idle);
    entry.idle = undefined;
    const { feed } = entry;
    feed.add(listener);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      feed.remove(listener);
      if (feed.size > 0 || this.feeds.get(workflowId)?.feed !== feed) return;
      clearTimeout(entry.idle);
      entry.idle = setTimeout(() => {
        if (feed.size > 0) return;
        feed.close();
        this.feeds.delete(workflowId);
      }, this.keepIdleMs);
      entry.idle.unref();
    };
  }

  /** A message or click for this session went through this gateway (see SessionFeed.nudge). */
  nudge(workflowId: string): void {
    this.feeds.get(workflowId)?.feed.nudge();
  }

  close(): void {
    for (const { feed, idle } of this.feeds.values()) {
      clearTimeout(idle);
      feed.close();
    }
    this.feeds.clear();
  }
}
