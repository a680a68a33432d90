/**
 * The newest view of one conversation and the newest partial text beside it, for one reader (a tab's live stream,
 * an AG-UI run): a slow reader skips what it would redraw at once anyway, and a partial never pushes out a view.
 */
import type { SessionView } from '../../workflows/session/contract';
import type { FeedEvent } from './view-feed';

export interface PartialText {
  streamId: string;
  text: string;
  done: boolean;
}
export type TabEvent = FeedEvent | { type: 'partial'; partial: PartialText };

/**
 * Holds only the newest view for a tab, and the newest partial text beside it: a slow tab skips what it would
 * redraw at once anyway, and a partial never pushes out a view (views go first).
 */
export class LatestEvent {
  private event: FeedEvent | undefined;
  private partial: PartialText | undefined;
  private waiting: ((event: TabEvent | undefined) => void) | undefined;
  private ended = false;
  private viewWaiting: ((view: SessionView) => void) | undefined;

  put(event: FeedEvent): void {
    if (this.ended) return;
    if (this.viewWaiting && event.type === 'state') {
      const waiting = this.viewWaiting;
      this.viewWaiting = undefined;
      return waiting(event.view);
    }
    if (this.waiting) this.deliver(event);
    else this.event = event;
  }

  putPartial(partial: PartialText): void {
    if (this.ended) return;
    if (this.waiting) this.deliver({ type: 'partial', partial });
    else this.partial = partial;
  }

  private deliver(event: TabEvent): void {
    const waiting = this.waiting!;
    this.waiting = undefined;
    waiting(event);
  }

  /** The next event (a view before a partial), or undefined once the tab is gone. */
  take(): Promise<TabEvent | undefined> {
    if (this.ended) return Promise.resolve(undefined);
    const event = this.event;
    this.event = undefined;
    if (event) return Promise.resolve(event);
    const partial = this.partial;
    this.partial = undefined;
    if (partial) return Promise.resolve({ type: 'partial', partial });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  /**
   * The next view within `ms` (undefined if none comes: no worker answered), taken; anything else that arrives
   * meanwhile (a partial, "not found") stays for `take`.
   */
  nextViewWithin(ms: number): Promise<SessionView | undefined> {
    if (this.event?.type === 'state') {
      const { view } = this.event;
      this.event = undefined;
      return Promise.resolve(view);
    }
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.viewWaiting = undefined;
        resolve(undefined);
      }, ms);
      this.viewWaiting = (view) => {
        clearTimeout(timer);
        resolve(view);
      };
    });
  }

  close(): void {
    this.ended = true;
    this.waiting?.(undefined);
    this.waiting = undefined;
  }
}
