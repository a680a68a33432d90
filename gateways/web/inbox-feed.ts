/**
 * "Needs you", pushed: one reader per person in this gateway process, shared by all their tabs. It watches each
 * listed conversation through its live feed (live-views.ts: a decision made anywhere — Slack, Discord, another
 * tab, another gateway — changes that conversation's view, and the list is read again at once), and looks for
 * newly waiting conversations in visibility every few seconds. A tab is sent the list only when it changed.
 */
import type { Logger } from '../../infra/log';
import type { Inbox, InboxList } from './inbox';
import type { LiveViews } from './live-views';

/** How often visibility is asked for conversations that started waiting (a new gate has no feed yet). */
const RESCAN_MS = 5_000;
/** A burst of changes (a batch decided, a turn moving on) is read once. */
const SETTLE_MS = 300;
/** Conversations watched live per person; beyond them, changes arrive with the next rescan. */
const MAX_WATCHED = 50;
/** However many nudges and changes arrive, a person's list is read at most once a second (a loop of clicks costs no more). */
const MIN_READ_GAP_MS = 1_000;

type Listener = (list: InboxList) => void;

class PersonInbox {
  readonly listeners = new Set<Listener>();
  private last: { body: string; list: InboxList } | undefined;
  private readonly watched = new Map<string, () => void>();
  private readonly rescan: NodeJS.Timeout;
  private settle: NodeJS.Timeout | undefined;
  private reading = false;
  private lastReadAt = 0;
  private readAgain = false;
  private closed = false;

  constructor(
    private readonly userId: string,
    private readonly inbox: Inbox,
    private readonly live: LiveViews,
    private readonly log: Logger,
  ) {
    this.rescan = setInterval(() => this.soon(0), RESCAN_MS).unref();
    this.soon(0);
  }

  add(listener: Listener): void {
    this.listeners.add(listener);
    if (this.last) listener(this.last.list);
  }

  /** Read the list again shortly (changes in a burst are read once). */
  soon(delayMs = SETTLE_MS): void {
    if (this.closed || this.settle) return;
    const gap = this.lastReadAt + MIN_READ_GAP_MS - Date.now();
    this.settle = setTimeout(
      () => {
        this.settle = undefined;
        void this.read();
      },
      Math.max(delayMs, gap),
    );
    this.settle.unref();
  }

  close(): void {
    this.closed = true;
    clearInterval(this.rescan);
    clearTimeout(this.settle);
    for (const leave of this.watched.values()) leave();
    this.watched.clear();
  }

  private async read(): Promise<void> {
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = true;
    this.lastReadAt = Date.now();
    try {
      const list = await this.inbox.list(this.userId);
      if (this.closed) return;
      this.watch(new Set(list.items.map((item) => item.workflowId)));
      const body = JSON.stringify(list);
      if (body === this.last?.body) return;
      this.last = { body, list };
      for (const listener of this.listeners) listener(list);
    } catch (error) {
      // Temporal not answering: the tabs keep what they show, and the next rescan tries again.
      this.log.warn('inbox not read', { userId: this.userId, error: (error as Error).message });
    } finally {
      this.reading = false;
      if (this.readAgain) {
        this.readAgain = false;
        this.soon();
      }
    }
  }

  /** Follows exactly the listed conversations: a change to one re-reads the list. */
  private watch(workflowIds: Set<string>): void {
    for (const [workflowId, leave] of this.watched)
      if (!workflowIds.has(workflowId)) {
        leave();
        this.watched.delete(workflowId);
      }
    for (const workflowId of workflowIds) {
      if (this.watched.has(workflowId) || this.watched.size >= MAX_WATCHED) continue;
      let first = true;
      const leave = this.live.subscribe(workflowId, () => {
        // The first event is the view as it is (already listed); every later one is a change.
        if (first) first = false;
        else this.soon();
      });
      this.watched.set(workflowId, leave);
    }
  }
}

export class InboxFeeds {
  private readonly people = new Map<string, PersonInbox>();

  constructor(
    private readonly inbox: Inbox,
    private readonly live: LiveViews,
    private readonly log: Logger,
  ) {}

  /** Sends this person's list now (when known) and whenever it changes, until the returned function. */
  subscribe(userId: string, listener: Listener): () => void {
    let person = this.people.get(userId);
    if (!person) this.people.set(userId, (person = new PersonInbox(userId, this.inbox, this.live, this.log)));
    person.add(listener);
    const entry = person;
    return () => {
      entry.listeners.delete(listener);
      if (entry.listeners.size || this.people.get(userId) !== entry) return;
      entry.close();
      this.people.delete(userId);
    };
  }

  /** Something was decided or sent through this gateway: every open inbox here looks again. */
  nudge(): void {
    for (const person of this.people.values()) person.soon();
  }

  close(): void {
    for (const person of this.people.values()) person.close();
    this.people.clear();
  }
}
