/**
 * Every open tab is a server-sent-events connection (a conversation's live view, the inbox): a person gets a
 * bounded number of each at once, so one person's tabs cannot hold a gateway's connections.
 */
export const MAX_STREAMS_PER_PERSON = 12;

/** What a person over the cap is told (HTTP 429). */
export const TOO_MANY_STREAMS = `too many live views open (${MAX_STREAMS_PER_PERSON}): close a tab`;

/** Counts one kind of stream per person: `take` gives the function that closes one, or undefined when over the cap. */
export class StreamCap {
  private readonly open = new Map<string, number>();

  take(userId: string): (() => void) | undefined {
    const streams = this.open.get(userId) ?? 0;
    if (streams >= MAX_STREAMS_PER_PERSON) return undefined;
    this.open.set(userId, streams + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(userId) ?? 1) - 1;
      if (left > 0) this.open.set(userId, left);
      else this.open.delete(userId);
    };
  }
}
