/**
 * A session that starts from an existing transcript (continue-as-new, an import, or a new run after a
 * terminated one) repairs its tail first, so the model never sees a tool call without a result. A run without a
 * carried transcript reads the previous run's first, and the settings with it.
 */
import * as wf from '@temporalio/workflow';
import type { Message } from './contract';
import { repairTranscript } from './repair';
import { loadRunOpening } from './session-activities';
import type { RunOpening } from './settings';
import type { Session } from './session';
import { unresolvedToolCalls } from './transcript';

/**
 * The transcript this run starts from: a carried transcript's tail repaired; or the previous run's transcript and
 * the settings, read (the run starts without the earlier messages when that read fails, and says so).
 */
export async function openRun(run: Session): Promise<void> {
  if (run.input.carried?.transcript.length) return repairTail(run);
  let opening: RunOpening | { failed: unknown };
  try {
    opening = await loadRunOpening();
  } catch (error) {
    opening = { failed: error };
  }
  openedWith(run, opening);
}

function openedWith(run: Session, opening: RunOpening | { failed: unknown }): void {
  if ('failed' in opening) {
    const error = opening.failed;
    const reason = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    wf.log.error("could not load the previous run's transcript", {
      sessionId: run.sessionId,
      error: String(reason),
    });
    run.state.appendAssistantNote(
      `I could not load this conversation's earlier messages (${String(reason)}), so this run starts without them.`,
    );
    return repairTail(run);
  }
  if (opening.settings) run.useSettings(opening.settings);
  continueFrom(run, opening.previousTranscript);
}

/** The previous run's transcript, when it left one (it ended unexpectedly), becomes this run's. */
function continueFrom(run: Session, previous: Message[]): void {
  if (previous.length) {
    run.state.transcript = previous;
    run.state.notify('This conversation continues from an earlier run that ended unexpectedly.');
  }
  repairTail(run);
}

/** The transcript's tail repaired, so the model never sees a tool call without a result. */
function repairTail(run: Session): void {
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
  // A fork through someone else's message waits for its owner's own (gateways/forks.ts): not an interruption.
  let { transcript, report } = repair(input.fork !== undefined && !input.carried?.turn);
  // A turn carried at a budget gate before its first model call looks unanswered but is being answered.
  if (report.recoveredUserTurn && input.carried?.turn) ({ transcript, report } = repair(true));
  if (report.interruptedCalls.length || report.recoveredUserTurn) {
    state.transcript = transcript;
    state.touch();
    wf.log.warn('transcript repaired', { sessionId, ...report });
  }
}
