/** Keeps a long activity visibly alive, so a killed worker is detected within the heartbeat timeout. */
import { Context } from '@temporalio/activity';

export async function withHeartbeat<T>(
  work: (signal: AbortSignal) => Promise<T>,
  everyMs = 3_000,
): Promise<T> {
  const context = Context.current();
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), everyMs);
  try {
    return await work(context.cancellationSignal);
  } finally {
    clearInterval(timer);
  }
}
