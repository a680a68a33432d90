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

/** The previous run's transcript, read together with the settings, which the run then uses (its first turn reads none of its own). */
async function openRun(run: SessionRun): Promise<Message[]> {
  const opening = await loadRunOpening();
  if (opening.settings) run.useSettings(opening.settings);
  return opening.previousTranscript;
}

export async function restoreTranscript(run: SessionRun): Promise<void> {
  const { input, state, sessionId } = run;
  if (!input.carried?.transcript.length) {
    const previous = await openRun(run).catch((error: unknown) => {
      const reason = error instanceof Error && error.cause instanceof Error ? error.cause : error;
      wf.log.error("could not load the previous run's transcript", { sessionId, error: String(reason) });
      state.appendAssistantNote(
        `I could not load this conversation's earlier messages (${String(reason)}), so this run starts without them.`,
      );
      return [];
    });
    if (previous.length) {
      state.transcript = previous;
      state.notify('This conversation continues from an earlier run that ended unexpectedly.');
    }
  }
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
