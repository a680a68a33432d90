/**
 * Tool runs with side effects, at most once on any host: the workflow history is the ledger. Such a run is
 * scheduled with one attempt, so the server never repeats it; the workflow schedules it again only after
 * the worker said it failed before the side effect could start (`ToolNotStarted`). A timeout, a lost
 * heartbeat (a killed worker) or a run cut off by a deploy becomes "interrupted: may or may not have run".
 */
import * as wf from '@temporalio/workflow';
import type { createActivities } from '../../activities';
import type { ToolRunRequest, ToolRunResult } from '../../common/tools/tool-run';
import { FailureType } from '../../common/errors';

type Activities = ReturnType<typeof createActivities>;

/** Attempts of a call that cannot start, 1, 2, 4 and 8 seconds apart. */
const NOT_STARTED_ATTEMPTS = 5;

const { runTool: runToolOnce } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  // How soon a killed worker's run is reported as interrupted; the worker heartbeats every 3 seconds.
  heartbeatTimeout: '15 seconds',
  retry: { maximumAttempts: 1 },
});

const INTERRUPTED = 'interrupted: may or may not have run';

export async function runWithSideEffects(request: ToolRunRequest): Promise<ToolRunResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runToolOnce(request);
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
      const cause = error instanceof wf.ActivityFailure ? error.cause : error;
      if (cause instanceof wf.ApplicationFailure && cause.type === FailureType.ToolNotStarted) {
        if (cause.nonRetryable || attempt >= NOT_STARTED_ATTEMPTS)
          return { status: 'error', content: `not run: ${cause.message}` };
        await wf.sleep(1_000 * 2 ** (attempt - 1));
        continue;
      }
      return {
        status: 'error',
        content: `${INTERRUPTED} (${describeInterruption(cause)}). It was not run again: check its effect before asking for it again.`,
      };
    }
  }
}

function describeInterruption(cause: unknown): string {
  if (cause instanceof wf.TimeoutFailure)
    return cause.timeoutType === 'HEARTBEAT'
      ? 'the worker running it stopped responding'
      : 'it ran out of time';
  return cause instanceof Error ? cause.message : String(cause);
}
