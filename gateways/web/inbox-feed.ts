/**
 * "Needs you", pushed: one reader per person in this gateway process, shared by all their tabs. It reads the
 * person's first page from visibility (inbox.ts: one list filtered by their ids, a count only when it is cut, no worker)
 * soon after anything is decided or sent through this gateway, and otherwise at a pace that slows while nothing
 * changes. A tab is sent the list only when it changed.
 *
 * Why per-person reads and not one watcher per gateway: visibility has no "changed since" filter, so a gateway-wide
 * watcher would read every open tab's items each time anyway, in one query that grows with the tabs; a person's
 * read grows only with their own first page, and an idle tab costs one read every RESCAN_MAX_MS (docs/SCALING.md).
 */
import type { Logger } from '../../infra/log';
import type { Inbox, InboxList } from './inbox';

/** The first look after a change (and at the start); each unchanged read waits longer, up to RESCAN_MAX_MS. */
const RESCAN_MIN_MS = 2_000;
const RESCAN_MAX_MS = 15_000;
const RESCAN_GROWTH = 1.5;
/** A burst of changes (a batch decided, a turn moving on) is read once. */
const SETTLE_MS = 300;
/** However many nudges arrive, a person's list is read at most once a second (a loop of clicks costs no more). */
const MIN_READ_GAP_MS = 1_000;

type Listener = (list: InboxList) => void;

class PersonInbox {
  readonly listeners = new Set<Listener>();
  private last: { body: string; list: InboxList } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private rescanMs = RESCAN_MIN_MS;
  private reading = false;
  private lastReadAt = 0;
  private readAgain = false;
  private closed = false;

  constructor(
    private readonly userId: string,
    private readonly inbox: Inbox,
    private readonly log: Logger,
  ) {
    this.schedule(0);
  }

  add(listener: Listener): void {
    this.listeners.add(listener);
    if (this.last) listener(this.last.list);
  }

  /** Something changed here: read again shortly, and look often for a while (visibility catches up in moments). */
  soon(): void {
    this.rescanMs = RESCAN_MIN_MS;
    this.schedule(SETTLE_MS);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  /** The next read in `delayMs` (or sooner, if one is already due sooner), never closer than a second apart. */
  private schedule(delayMs: number): void {
    if (this.closed) return;
    const at = Math.max(Date.now() + delayMs, this.lastReadAt + MIN_READ_GAP_MS);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.read(), at - Date.now());
    this.timer.unref();
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
      const body = JSON.stringify(list);
      if (body === this.last?.body) {
        this.rescanMs = Math.min(RESCAN_MAX_MS, this.rescanMs * RESCAN_GROWTH);
        return;
      }
      this.rescanMs = RESCAN_MIN_MS;
      this.last = { body, list };
      for (const listener of this.listeners) listener(list);
    } catch (error) {
      // Temporal not answering: the tabs keep what they show, and a later read tries again.
      this.rescanMs = Math.min(RESCAN_MAX_MS, this.rescanMs * RESCAN_GROWTH);
      this.log.warn('inbox not read', { userId: this.userId, error: (error as Error).message });
    } finally {
      this.reading = false;
      if (this.readAgain) {
        this.readAgain = false;
        this.schedule(SETTLE_MS);
      } else this.schedule(this.rescanMs);
    }
  }
}

export class InboxFeeds {
  private readonly people = new Map<string, PersonInbox>();

  constructor(
    private readonly inbox: Inbox,
    private readonly log: Logger,
  ) {}

  /** Sends this person's list now (when known) and whenever it changes, until the returned function. */
  subscribe(userId: string, listener: Listener): () => void {
    let person = this.people.get(userId);
    if (!person) this.people.set(userId, (person = new PersonInbox(userId, this.inbox, this.log)));
    person.add(listener);
    const entry = person;
    return () => {
      entry.listeners.delete(listener);
      if (entry.listeners.size || this.people.get(userId) !== entry) return;
      entry.close();
      this.people.delete(userId);
    };
  }

  /**
   * This person decided or sent something through this gateway: their open inbox here looks again soon. Only
   * theirs: a click costs one read, not one per open tab; others see it at their next look.
   */
  nudge(userId: string): void {
    this.people.get(userId)?.soon();
  }

  close(): void {
    for (const person of this.people.values()) person.close();
    this.people.clear();
  }
}
