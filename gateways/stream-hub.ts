/**
 * The gateway's end of streamed answers (infra/stream-relay.ts): `POST /internal/stream` takes workers' updates
 * (bearer STREAM_TOKEN, compared in constant time) and the hub hands each to the web tabs watching that session.
 * Only the latest text per session is kept, briefly: a tab that opens mid-answer sees it, a finished one is gone.
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import { MAX_PARTIAL_CHARS, STREAM_PATH, type StreamUpdate } from '../infra/stream-relay';
import { sameSecret } from '../infra/same-secret';

/** A finished stream is forgotten after this long; an abandoned one (its worker died) after the second. */
const KEEP_DONE_MS = 30_000;
const KEEP_OPEN_MS = 10 * 60_000;

const updateSchema = z.strictObject({
  workflowId: z.string().min(1).max(300),
  streamId: z.string().min(1).max(200),
  text: z.string().max(MAX_PARTIAL_CHARS),
  done: z.boolean().optional(),
  seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
});

export class StreamHub {
  private readonly latest = new Map<string, StreamUpdate & { at: number }>();
  private readonly listeners = new Map<string, Set<(update: StreamUpdate) => void>>();
  /** Streams that ended, per session (the last few): a late update of one must not come back as a partial. */
  private readonly ended = new Map<string, string[]>();
  private readonly pruning = setInterval(() => this.prune(), 60_000).unref();

  accept(update: StreamUpdate): void {
    const { workflowId, streamId } = update;
    if (this.ended.get(workflowId)?.includes(streamId)) return;
    // Updates arrive as separate requests: an older one of the same stream is stale.
    const kept = this.latest.get(workflowId);
    if (kept?.streamId === streamId && (update.seq ?? 0) <= (kept.seq ?? 0)) return;
    if (update.done) this.ended.set(workflowId, [...(this.ended.get(workflowId) ?? []).slice(-9), streamId]);
    this.latest.set(workflowId, { ...update, at: Date.now() });
    for (const listener of this.listeners.get(workflowId) ?? []) listener(update);
  }

  /** Calls `listener` with the current partial text (if any) and every update, until the returned function. */
  subscribe(workflowId: string, listener: (update: StreamUpdate) => void): () => void {
    let set = this.listeners.get(workflowId);
    if (!set) this.listeners.set(workflowId, (set = new Set()));
    set.add(listener);
    const current = this.latest.get(workflowId);
    if (current && !current.done) listener(current);
    return () => {
      set.delete(listener);
      if (!set.size) this.listeners.delete(workflowId);
    };
  }

  close(): void {
    clearInterval(this.pruning);
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, kept] of this.latest)
      if (now - kept.at > (kept.done ? KEEP_DONE_MS : KEEP_OPEN_MS)) {
        this.latest.delete(id);
        this.ended.delete(id);
      }
  }
}

/** Mounts the workers' endpoint when a STREAM_TOKEN is configured; without one there is no such route. */
export function mountStreamEndpoint(app: Hono, hub: StreamHub, token: string | undefined): void {
  if (!token) return;
  app.post(STREAM_PATH, async (c) => {
    const presented = /^Bearer (.+)$/.exec(c.req.header('authorization') ?? '')?.[1];
    if (!presented || !sameSecret(presented, token)) return c.json({ error: 'not authorized' }, 401);
    const parsed = updateSchema.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) return c.json({ error: 'malformed stream update' }, 400);
    hub.accept(parsed.data);
    return c.body(null, 204);
  });
}
