/** Keeps a long activity visibly alive, so a killed worker is detected within the heartbeat timeout. */
import { Context } from '@temporalio/activity';

/**
 * How soon a running activity hears that it was cancelled (Stop, or a cancelled session): the server answers a
 * heartbeat with the cancellation, and the SDK sends heartbeats at most once per throttle interval (by default
 * 80 % of the heartbeat timeout: 12 s for a tool run). Activities heartbeat every second and every worker sends
 * each at once (`activityHeartbeats` in its options), so a Stop kills a tool's process within about a second.
 * Each running activity costs one small request a second; there are only as many as the worker runs at once.
 */
export const HEARTBEAT_EVERY_MS = 1_000;
export const activityHeartbeats = { maxHeartbeatThrottleInterval: HEARTBEAT_EVERY_MS } as const;

/**
 * Heartbeats while `work` runs; `signal` aborts when the activity is cancelled (Stop: the next heartbeat says so).
 * The first heartbeat goes after `everyMs`, not at once: each heartbeat is a database write on the server, and
 * most tool runs and model calls end sooner (a heartbeat at start cost two writes per tool turn for nothing). A
 * retry still reads the last details an earlier attempt recorded; the heartbeat timeout counts from the start.
 */
export async function withHeartbeat<T>(
  work: (signal: AbortSignal) => Promise<T>,
  everyMs = HEARTBEAT_EVERY_MS,
  /** What a retry of this activity should know (its next attempt reads it from `info.heartbeatDetails`). */
  details: () => unknown = () => undefined,
): Promise<T> {
  const context = Context.current();
  const timer = setInterval(() => context.heartbeat(details()), everyMs);
  try {
    return await work(context.cancellationSignal);
  } finally {
    clearInterval(timer);
  }
}
