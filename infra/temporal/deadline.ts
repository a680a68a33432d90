/**
 * A bound on one call to Temporal. The client's own deadline is no bound while the server cannot be reached (its
 * reconnect backoff comes on top: 19–22 s measured for a `describe()` against a stopped server), so a timer is.
 * A call that still lands later is harmless where this is used: messages carry their id, which the workflow takes
 * once, and a repeated click is answered "already decided".
 */
import type { Client } from '@temporalio/client';

export class TemporalDeadlineError extends Error {
  constructor(ms: number) {
    super(`the Temporal server did not answer within ${ms} ms`);
    this.name = 'TemporalDeadlineError';
  }
}

export async function withinDeadline<T>(client: Client, ms: number, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TemporalDeadlineError(ms)), ms);
  });
  try {
    return await Promise.race([client.withDeadline(Date.now() + ms, fn), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** gRPC codes of a server that did not answer: UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED (the deadline's abort). */
const NOT_ANSWERING = new Set([14, 4, 1]);

/** Temporal did not answer (a stopped server, or a part of it such as history): say so, in words that are true. */
export function isTemporalNotAnswering(error: unknown): boolean {
  if (error instanceof TemporalDeadlineError) return true;
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; depth++) {
    if (typeof e.code === 'number' && NOT_ANSWERING.has(e.code)) return true;
    e = e.cause as typeof e;
  }
  return false;
}
