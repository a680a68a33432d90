/**
 * A session that starts from an existing transcript (continue-as-new, an import, or a new run after a
 * terminated one) repairs its tail first, so the model never sees a tool call without a result. A run without a
 * carried transcript reads the previous run's first, and the settings with it.
 */
import * as wf from '@temporalio/workflow';
import type { Message } from './contract';
import { repairTranscript } from './repair';
import { loadRunOpening } from './session-activities';
import type { SessionRun } from './session-run';
import { unresolvedToolCalls } from './transcript';

/**
 * Restores the transcript this run starts from. A run without a carried transcript reads the previous run's (and
 * the settings) by one activity, and only then returns a promise: every promise a parked session holds costs its
 * replay a stack trace, so this is one chain, not an async function per step.
 */
export function restoreTranscript(run: SessionRun): Promise<void> | undefined {
  if (run.input.carried?.transcript.length) return void repairTail(run);
  return loadRunOpening().then(
    (opening) => {
      if (opening.settings) run.useSettings(opening.settings);
      continueFrom(run, opening.previousTranscript);
    },
    (error: unknown) => {
      const reason = error instanceof Error && error.cause instanceof Error ? error.cause : error;
      wf.log.error("could not load the previous run's transcript", {
        sessionId: run.sessionId,
        error: String(reason),
      });
      run.state.appendAssistantNote(
        `I could not load this conversation's earlier messages (${String(reason)}), so this run starts without them.`,
      );
      repairTail(run);
    },
  );
}

/** The previous run's transcript, when it left one (it ended unexpectedly), becomes this run's. */
function continueFrom(run: SessionRun, previous: Message[]): void {
  if (previous.length) {
    run.state.transcript = previous;
    run.state.notify('This conversation continues from an earlier run that ended unexpectedly.');
  }
  repairTail(run);
}

/** The transcript's tail repaired, so the model never sees a tool call without a result. */
function repairTail(run: SessionRun): void {
  const { input, state, sessionId } = run;
  if (!state.transcript.length) return;
  // A turn carried across continue-as-new is live: its unanswered calls are about to be handled, not repaired.
  const live = new Set(
    input.carried?.turn
      ? unresolvedToolCalls(state.transcript).map((call) => call.id)
      : state.pendingGates().map((gate) => gate.toolCallId),
  );
  const repair = (userTurnIsLive: boolean) =>
    repairTranscript(state.transcript, Date.now(), () => wf.uuid4(), {
      liveCallIds: live,
      userTurnIsLive,
    });
  let { transcript, report } = repair(false);
  // A turn carried at a budget gate before its first model call looks unanswered but is being answered.
  if (report.recoveredUserTurn && input.carried?.turn) ({ transcript, report } = repair(true));
  if (report.interruptedCalls.length || report.recoveredUserTurn) {
    state.transcript = transcript;
    state.touch();
    wf.log.warn('transcript repaired', { sessionId, ...report });
  }
}
