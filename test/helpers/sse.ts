/** A browser tab's live view as a test sees it: the page's `EventSource` stream, read event by event. */
export interface SseEvent {
  event: string;
  data: string;
}

export class SseTab {
  readonly events: SseEvent[] = [];
  private readonly abort = new AbortController();
  private done: Promise<void> | undefined;

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  async open(): Promise<this> {
    const response = await fetch(this.url, {
      headers: { accept: 'text/event-stream', ...this.headers },
      signal: this.abort.signal,
    });
    if (response.status !== 200 || !response.body) throw new Error(`stream refused: HTTP ${response.status}`);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    this.done = (async () => {
      let buffer = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += value;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const lines = block.split('\n');
            const event =
              lines
                .find((l) => l.startsWith('event:'))
                ?.slice(6)
                .trim() ?? 'message';
            const data = lines
              .filter((l) => l.startsWith('data:'))
              .map((l) => l.slice(5).replace(/^ /, ''))
              .join('\n');
            if (lines.some((l) => l.startsWith('data:'))) this.events.push({ event, data });
          }
        }
      } catch {
        // closed by the test or the server
      }
    })();
    return this;
  }

  /** The views received so far, parsed. */
  views<T = { transcript: { text?: string }[] }>(): T[] {
    return this.events.filter((e) => e.event === 'state').map((e) => JSON.parse(e.data) as T);
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}
