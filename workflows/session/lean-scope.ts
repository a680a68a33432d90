/**
 * Cancellation scopes and a timed wait that hold fewer promises than the SDK's own helpers. The SDK records a
 * stack trace for every promise workflow code creates (about 60-80 µs each, on every replay of a parked session;
 * docs/BENCHMARKS.md, replay), so the turn and its gate waits, which every parked session replays, use these.
 */
import * as wf from '@temporalio/workflow';

/**
 * A cancellation scope without a timeout: `run` calls its body directly, without the async frame (two promises)
 * the SDK's scope adds on every run to arm a scope timeout. Cancellation is the SDK's, unchanged: what the body
 * starts (timers, activities, conditions, child scopes) is linked to this scope as before.
 */
export class LeanScope extends wf.CancellationScope {
  constructor() {
    super({ cancellable: true });
  }

  protected override runInContext<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }
}

/**
 * A durable timer in the current scope, which is the turn's when a turn waits on its gates: `fired` once it
 * fires. It is not cancelled when the wait ends first; the turn cancels the timers it leaves when it ends
 * (Turn.steps), so a wait needs no scope of its own (three promises fewer). Waiting with
 * `wf.condition(() => timer.fired || fn)` is then the SDK's `condition(fn, timeout)` in less than half its
 * promises (the SDK's races two promises inside a scope, with async frames of its own).
 */
export function startTimer(ms: number): { readonly fired: boolean } {
  const timer = { fired: false };
  wf.sleep(ms).then(
    () => void (timer.fired = true),
    () => undefined, // cancelled with its turn: nothing waits on it any more
  );
  return timer;
}
