/**
 * The session engine's workflows. A conversation (`sessionWorkflow`, one per thread) runs the agent loop for
 * each message; a mission run (`missionRunWorkflow`, started by its mission) runs one turn for the mission's
 * goal and reports the result. Both wait durably at gates (state + condition with a timeout), so a click hours
 * later, after any restart, resumes them by replay. The handlers below are one line each: what a signal does
 * lives in SessionRun (session-run.ts), the turn loop in turn.ts, every gate transition in gates.ts.
 */
import * as wf from '@temporalio/workflow';
import {
  answerDraftSignal,
  answerSignal,
  credentialProvidedSignal,
  decideSignal,
  clickOutcomeQuery,
  missionEventSignal,
  pendingGatesQuery,
  repostPendingSignal,
  revokeGrantSignal,
  stateQuery,
  stopSignal,
  archiveSignal,
  feedbackSignal,
  transcriptQuery,
  tryModelNowSignal,
  a2aPushSignal,
  userMessageSignal,
  type Message,
  type SessionInput,
} from './contract';
import { runEndedSignal, type RunEnd, type RunResult } from '../missions/contract';
import { openRun } from './restore';
import { SessionRun } from './session-run';
import { runTurn, Turn } from './turn';
import { unresolvedToolCalls } from './transcript';
import { serveViewWatches } from './view-watch';
import { listenForUpgrade } from '../upgrade';

/**
 * A conversation: one per channel thread (web, Slack, Discord), each message a turn. PINNED to the version that
 * started the run; it moves to the current version when it continues as new (between turns, or mid-wait carrying
 * its open gates), which the drain sweep asks for after a deploy (workflows/upgrade.ts).
 */
export function sessionWorkflow(input: SessionInput): Promise<void> {
  if (input.run)
    throw wf.ApplicationFailure.nonRetryable('a mission run starts as missionRunWorkflow', 'InvalidInput');
  const run = new SessionRun(input);
  registerHandlers(run);
  const opening = input.carried?.turn ? resumeCarriedTurn(run) : openRun(run);
  return opening.then(() => converse(run));
}

/** One run of a mission: the goal is its one turn; the result goes back to the mission. PINNED, moves like a session. */
export async function missionRunWorkflow(input: SessionInput): Promise<RunResult> {
  if (!input.run) throw wf.ApplicationFailure.nonRetryable('a mission run needs input.run', 'InvalidInput');
  const run = new SessionRun(input);
  registerHandlers(run);
  let result: RunResult;
  try {
    await resumeCarriedTurn(run);
    result = await finishMissionRun(run);
  } catch (error) {
    // Moving to its next run (continue-as-new) is not an end; anything else is told, then thrown as before.
    if (!(error instanceof wf.ContinueAsNew)) await tellMission(input.run.missionWorkflowId, { error });
    throw error;
  }
  await tellMission(input.run.missionWorkflowId, { result });
  return result;
}

/**
 * The run's end, told to its mission by signal: the mission may have continued as new since it started this run
 * (then no child result reaches it). Told even when the run was cancelled.
 */
async function tellMission(
  missionWorkflowId: string,
  end: { result: RunResult } | { error: unknown },
): Promise<void> {
  const runWorkflowId = wf.workflowInfo().workflowId;
  const told: RunEnd =
    'result' in end
      ? { runWorkflowId, result: end.result }
      : {
          runWorkflowId,
          failure: {
            message: (end.error instanceof Error ? end.error.message : String(end.error)).slice(0, 500),
            cancelled: wf.isCancellation(end.error),
          },
        };
  await wf.CancellationScope.nonCancellable(() =>
    wf.getExternalWorkflowHandle(missionWorkflowId).signal(runEndedSignal, told),
  ).catch((error: unknown) => wf.log.warn('telling the mission failed', { error: String(error) }));
}

function registerHandlers(run: SessionRun): void {
  listenForUpgrade();
  // Signals, not updates: clicks and messages must be accepted while no worker runs.
  wf.setHandler(repostPendingSignal, (raw) => run.onRepostPending(raw));
  wf.setHandler(stateQuery, () => run.state.view(run.sessionId));
  serveViewWatches(
    run.state,
    () => run.continuingAsNew || (run.state.status === 'idle' && run.shouldContinueAsNew()),
  );
  wf.setHandler(transcriptQuery, () => run.state.transcript);
  wf.setHandler(pendingGatesQuery, () => run.state.pendingGates());
  wf.setHandler(answerSignal, (raw, seal, origin) => run.onAnswer(raw, seal, origin));
  wf.setHandler(clickOutcomeQuery, ({ gateId, userId, since }) => ({
    gate: run.state.gates.get(gateId) ?? null,
    notices: run.state.notices.filter((n) => n.to === userId && n.at >= since),
    checking: run.signalsBeingChecked,
  }));
  wf.setHandler(answerDraftSignal, (raw, seal) => run.onAnswerDraft(raw, seal));
  wf.setHandler(missionEventSignal, (event) => run.onMissionEvent(event));
  wf.setHandler(credentialProvidedSignal, (raw) => run.onCredentialProvided(raw));
  wf.setHandler(decideSignal, (raw, seal, origin) => run.onDecide(raw, seal, origin));
  wf.setHandler(revokeGrantSignal, (raw, seal) => run.onRevokeGrant(raw, seal));
  wf.setHandler(userMessageSignal, (raw, seal) => run.onUserMessage(raw, seal));
  wf.setHandler(stopSignal, (raw) => run.onStop(raw));
  wf.setHandler(tryModelNowSignal, (raw) => run.onTryModelNow(raw));
  wf.setHandler(a2aPushSignal, (raw) => run.onA2aPush(raw));
  wf.setHandler(archiveSignal, (raw) => run.onArchive(raw));
  wf.setHandler(feedbackSignal, (raw) => run.onFeedback(raw));
}

/** After continue-as-new in the middle of a turn (gates open), the turn goes on where it was. */
async function resumeCarriedTurn(run: SessionRun): Promise<void> {
  await openRun(run);
  const resumedTurn = run.input.carried?.turn;
  if (!resumedTurn) return;
  run.setStatus('running');
  await run.refreshSettings();
  const calls = unresolvedToolCalls(run.state.transcript);
  await run.play(new Turn(run, resumedTurn.requesterId, { resume: { ...resumedTurn, calls } }));
}

async function finishMissionRun(run: SessionRun): Promise<RunResult> {
  while (run.state.inbox.length) await runTurn(run, run.state.inbox.shift()!);
  await wf.condition(() => run.outbox.drained);
  const answer = [...run.state.transcript]
    .reverse()
    .find(
      (m): m is Extract<Message, { role: 'assistant' }> =>
        m.role === 'assistant' && !m.synthetic && !!m.text.trim(),
    );
  return run.failure
    ? { ok: false, answer: answer?.text ?? '', reason: run.failure }
    : { ok: true, answer: answer?.text ?? '(no answer)' };
}

/** A conversation: one turn per message, in order, continuing as new between turns when the history is long. */
async function converse(run: SessionRun): Promise<never> {
  run.setStatus(run.state.inbox.length ? 'running' : 'idle');
  const ready = () => run.state.inbox.length > 0 || run.shouldContinueAsNew();
  for (;;) {
    // A message already waiting is taken at once (a condition would cost a promise and change nothing).
    if (!ready()) await wf.condition(ready);
    if (run.shouldContinueAsNew()) return await run.handOver();
    await runTurn(run, run.state.inbox.shift()!);
  }
}

export type { Message };
