/** The activities a session calls, each with the timeout and retry policy its work calls for. */
import * as wf from '@temporalio/workflow';
import type { createActivities } from '../../activities';
import { FailureType } from '../../common/errors';

type Activities = ReturnType<typeof createActivities>;

/** Refusals that will not pass on a retry (a bad key, an unknown model, a malformed request). */
export const PERMANENT_MODEL_FAILURES: string[] = [
  FailureType.ModelAuth,
  FailureType.ModelNotFound,
  FailureType.ModelBadRequest,
];

export const { callModel } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  // A Stop waits (about a heartbeat, 1 s) for the call to end: its cancellation carries what was written by then.
  cancellationType: wf.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  heartbeatTimeout: '15 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 6,
    nonRetryableErrorTypes: [FailureType.ModelAuth, FailureType.ModelNotFound, FailureType.ModelBadRequest],
  },
});

/** Summaries are model calls too: retried like them, and a refusal leaves the older messages out instead. */
export const { summarizeConversation } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '15 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 4,
    nonRetryableErrorTypes: [...PERMANENT_MODEL_FAILURES, FailureType.ContextTooLong],
  },
});

/** Read-only tool runs: retried freely. */
export const { runTool } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

/**
 * The same activity for a `repeatable` call (common/tools/registry.ts): its executor makes a second run with the
 * same key the first, so an attempt cut off by a killed worker or an unreachable server is run again, for minutes,
 * until it answers, instead of being reported "may or may not have run".
 */
export const { runTool: runRepeatableTool } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '20 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 12,
  },
});

export const { discoverMcpTools } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

export const { planToolCall, saveUserGrant, loadSettings, loadRunOpening, recordSpend } =
  wf.proxyActivities<Activities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 20 },
  });

/**
 * Gateway seals are checked (and what a conversation passes on to a mission run sealed) by the worker, which holds
 * the key: ordinary activities, since they are in the path of every message (seal-check.ts says why not local).
 */
export const { verifyGatewaySeals, sealForRun } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 10 },
});

/** The worker checks an operator's signature: a local activity, as the key never leaves the worker. */
export const { verifyOperatorAction } = wf.proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 5 },
});

export const { deliver } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/**
 * A2A push notifications (a2a-push.ts): the activity tells which receivers it still owes (the workflow asks again on
 * its own back-off); retried here only when the conversation or the vault could not be read.
 */
export const { pushA2aTasks } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 3,
  },
});

/** Gates mailed to their deciders (gate-mail.ts): an SMTP server that does not answer is asked again for minutes. */
export const { mailGates } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '2 minutes',
    maximumAttempts: 8,
  },
});

/** What an activity failure says, for the conversation and the logs. */
export function failureMessage(error: unknown): string {
  if (error instanceof wf.ActivityFailure && error.cause) return error.cause.message;
  // A local activity's failure after its retries can arrive as the activity's own ApplicationFailure.
  if (error instanceof wf.ApplicationFailure) return error.message;
  return String(error);
}

/** The failure type an activity threw (ApplicationFailure), if any. */
export function failureType(error: unknown): string | undefined {
  return error instanceof wf.ActivityFailure && error.cause instanceof wf.ApplicationFailure
    ? (error.cause.type ?? undefined)
    : undefined;
}
