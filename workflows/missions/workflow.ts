/**
 * One mission (`mission:<id>`): fires runs on its cadence (cron with time zone, manual, webhook), each a
 * child session workflow running the agent loop on the goal, so every run has its own page in the UI.
 *
 * - No pile-up: while a run is active (or waiting on a gate) a due fire is skipped and recorded; after
 *   downtime the late timer fires once, so at most one catch-up run.
 * - A gate in a run pauses the mission and is posted to the owner's conversation (whatever `notify` says:
 *   it governs results); when it is decided the run continues in place. Denied, expired or cancelled: the
 *   run ends and the mission fails with the reason, told in the owner's conversation.
 * - N consecutive failed runs pause the mission with the reason; guardrails cap runs per day and space them.
 */
import * as wf from '@temporalio/workflow';
import type { createActivities } from '../../activities';
import { AgentMissionName, AgentMissionStatus, AgentOwner } from '../../common/search-attributes';
import type { MissionStatus } from '../../common/missions/types';
import { MISSION_DIRECTORY_ID } from '../../common/missions/types';
import { missionEventSignal, type Gate, type MissionEvent, type SessionInput } from '../session/contract';
import { describeOutcome, describeWaiting } from '../session/gates';
import type { missionRunWorkflow } from '../session/workflow';
import { continueOnCurrentVersion, listenForUpgrade, upgradeRequested } from '../upgrade';
import { missionRunPrefix, missionRunWorkflowId } from '../../common/ids';

import {
  completeSignal,
  fireSignal,
  missionRecordSignal,
  missionViewQuery,
  pauseSignal,
  resumeSignal,
  runGateSignal,
  runNoticeSignal,
  updateMissionSignal,
  type FireRequest,
  type MissionInput,
  type RecordedGate,
  type RunRecord,
  type RunResult,
} from './contract';

const { nextFireTime } = wf.proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 5 },
});

const MAX_RUN_RECORDS = 20;
const MAX_SKIP_RECORDS = 20;
const LATE_AFTER_MS = 60_000;
const EVENTS_BEFORE_CONTINUE = 5_000;
const OK_OUTCOMES = new Set(['approved', 'edited', 'always', 'answered', 'connected']);

/**
 * PINNED; moves to the current version at a continue-as-new between runs (a run in flight finishes first, on its own
 * version or, asked by the sweep, on the current one after its own hand-over).
 */
export async function missionWorkflow(input: MissionInput): Promise<void> {
  listenForUpgrade();
  const missionId = input.id;
  const workflowId = wf.workflowInfo().workflowId;
  let name = input.name;
  const settings = { ...input.settings };
  const carried = input.carried;
  let status: MissionStatus = carried?.status ?? 'active';
  let reason: string | null = carried?.reason ?? null;
  const runs: RunRecord[] = [...(carried?.runs ?? [])];
  const skipped = [...(carried?.skipped ?? [])];
  let consecutiveFailures = carried?.consecutiveFailures ?? 0;
  let runCount = carried?.runCount ?? 0;
  let running: { workflowId: string; n: number } | null = null;
  /** Runs whose end is still being recorded and told (finishRun / failRun). */
  let recording = 0;
  let gate: RecordedGate | null = null;
  /** The open gate as the run reported it, to close it in the owner's conversation if the run ends first. */
  let openGate: Gate | null = null;
  let nextFireAt: number | null = null;
  let scheduleChanged = true;
  const fires: FireRequest[] = [];

  const publish = (): void => {
    wf.upsertSearchAttributes([
      { key: AgentOwner, value: input.ownerId },
      { key: AgentMissionName, value: name },
      { key: AgentMissionStatus, value: status },
    ]);
    wf.upsertMemo({
      waitingFor: gate ? `${gate.needed} (run ${gate.runWorkflowId})` : null,
      reason,
    });
    void wf
      .getExternalWorkflowHandle(MISSION_DIRECTORY_ID)
      .signal(missionRecordSignal, { id: missionId, status, shared: settings.shared })
      .catch(() => {});
  };

  const setStatus = (next: MissionStatus, why: string | null): void => {
    status = next;
    reason = why;
    publish();
  };

  /**
   * Tells a conversation; a closed one is not an error. Results go where `notify` says (or nowhere);
   * what needs the owner (gates, failures, pauses) goes to the owner's conversation in any case.
   */
  const tell = async (
    to: 'results' | 'owner',
    event: Omit<MissionEvent, 'missionId' | 'missionName'>,
  ): Promise<void> => {
    // Gates and failures go where the owner last set the mission up (only the owner changes it), so they reach
    // the person its runs act as; missions from before ownerSessionId existed use their notify conversation.
    const sessionId =
      to === 'results' ? settings.notifySessionId : (settings.ownerSessionId ?? settings.notifySessionId);
    if (!sessionId) return;
    await wf
      .getExternalWorkflowHandle(sessionId)
      .signal(missionEventSignal, { missionId, missionName: name, ...event })
      .catch((error: unknown) =>
        wf.log.warn('mission notification failed', { missionId, error: String(error) }),
      );
  };
  const notify = (event: Omit<MissionEvent, 'missionId' | 'missionName'>) => tell('results', event);
  const notifyOwner = (event: Omit<MissionEvent, 'missionId' | 'missionName'>) => tell('owner', event);

  wf.setHandler(missionViewQuery, () => ({
    id: missionId,
    name,
    ownerId: input.ownerId,
    settings,
    guardrails: input.guardrails,
    status,
    reason,
    runs,
    skipped,
    consecutiveFailures,
    running: running?.workflowId ?? null,
    gate,
    nextFireAt,
  }));
  /**
   * Only the owner changes, pauses, resumes or completes the mission: its runs act as them. The tools refuse
   * others with a message; this holds against a signal sent straight at the workflow too.
   */
  const byOwner = (by: string, what: string): boolean => {
    if (by === input.ownerId) return true;
    wf.log.warn('mission change refused: only its owner changes it', { missionId, by, what });
    return false;
  };
  wf.setHandler(fireSignal, (request) => {
    if (request.trigger === 'webhook' && settings.cadence.kind !== 'webhook')
      return skip(`webhook call refused: the cadence is ${settings.cadence.kind}`);
    if (request.trigger === 'manual' && request.by !== input.ownerId) {
      // Others may run a shared mission as its owner wrote it, never add to the instructions of a run acting as them.
      if (!settings.shared) return skip(`fire by @${request.by} refused: the mission is not shared`);
      const { context: _dropped, ...asWritten } = request;
      return void fires.push(asWritten);
    }
    fires.push(request);
  });
  wf.setHandler(pauseSignal, ({ by, reason: why }) => {
    if (status === 'completed' || !byOwner(by, 'pause')) return;
    setStatus('paused', why ? `paused by @${by}: ${why}` : `paused by @${by}`);
  });
  wf.setHandler(resumeSignal, ({ by }) => {
    if (status === 'completed' || !byOwner(by, 'resume')) return;
    // A manual resume clears the recorded gate and the failure count.
    gate = null;
    consecutiveFailures = 0;
    setStatus('active', null);
    scheduleChanged = true;
    wf.log.info('mission resumed', { missionId, by });
  });
  wf.setHandler(completeSignal, ({ by, reason: why }) => {
    if (!byOwner(by, 'complete')) return;
    setStatus('completed', why ? `completed by @${by}: ${why}` : `completed by @${by}`);
  });
  wf.setHandler(updateMissionSignal, ({ by, name: newName, settings: changes }) => {
    if (!byOwner(by, 'update')) return;
    if (newName) name = newName;
    Object.assign(settings, changes);
    scheduleChanged = true;
    publish();
  });
  wf.setHandler(runGateSignal, ({ runWorkflowId, gate: runGate, resolved, outcome, reminder }) => {
    if (running?.workflowId !== runWorkflowId) return;
    if (!resolved && reminder)
      return void notifyOwner({ gate: runGate, resolved: false, runWorkflowId, reminder });
    if (!resolved) {
      openGate = runGate;
      gate = {
        gateId: runGate.id,
        kind: runGate.kind,
        tool: runGate.toolName,
        needed: describeWaiting([runGate]),
        runWorkflowId,
      };
      if (status === 'active') setStatus('paused', `run ${running.n} waits for ${gate.needed}`);
      void notifyOwner({ gate: runGate, resolved: false, runWorkflowId });
      return;
    }
    if (openGate?.id === runGate.id) openGate = null;
    void notifyOwner({
      gate: runGate,
      resolved: true,
      outcome: outcome ?? describeOutcome(runGate),
      runWorkflowId,
    });
    if (gate?.gateId !== runGate.id) return;
    gate = null;
    const result = runGate.resolution?.outcome ?? 'cancelled';
    if (OK_OUTCOMES.has(result)) {
      if (status === 'paused' && reason?.startsWith(`run ${running.n} waits`)) setStatus('active', null);
      return;
    }
    // Denied, expired, superseded or cancelled: the run ends here and the mission fails with the reason.
    const why = `run ${running.n}: ${runGate.toolName} ${describeOutcome(runGate)}${runGate.resolution?.reason ? ` (${runGate.resolution.reason})` : ''}`;
    setStatus('failed', why);
    void wf
      .getExternalWorkflowHandle(running.workflowId)
      .cancel()
      .catch(() => {});
  });

  // A run refused someone's click on its gate: they clicked in the conversation this mission reports to.
  wf.setHandler(runNoticeSignal, ({ runWorkflowId, text, to }) => {
    if (!runWorkflowId.startsWith(missionRunPrefix(missionId))) return;
    void notifyOwner({ notice: { text, to }, runWorkflowId });
  });

  const runsInLastDay = () => runs.filter((r) => r.startedAt > Date.now() - 24 * 3_600_000).length;

  function skip(why: string): void {
    skipped.push({ at: Date.now(), reason: why });
    if (skipped.length > MAX_SKIP_RECORDS) skipped.splice(0, skipped.length - MAX_SKIP_RECORDS);
  }

  async function tryStart(trigger: RunRecord['trigger'], context?: string, firedBy?: string): Promise<void> {
    if (status !== 'active')
      return skip(`${trigger} fire skipped: the mission is ${status}${reason ? ` (${reason})` : ''}`);
    if (running) return skip(`${trigger} fire skipped: run ${running.n} is still going`);
    if (runsInLastDay() >= input.guardrails.maxRunsPerDay)
      return skip(`${trigger} fire skipped: at most ${input.guardrails.maxRunsPerDay} runs a day`);
    const last = runs.at(-1);
    if (last && Date.now() - last.startedAt < input.guardrails.cooldownMs)
      return skip(
        `${trigger} fire skipped: cooldown (${Math.round(input.guardrails.cooldownMs / 1000)} s between runs)`,
      );
    const n = ++runCount;
    const runWorkflowId = missionRunWorkflowId(missionId, n);
    const goalText = [
      settings.goal,
      context ? `\nContext from the trigger:\n${context}` : '',
      `\n(Mission "${name}", run ${n}, ${trigger}. Answer with what you found or did — the data, not a narration.${
        settings.notifyMode === 'notable'
          ? ' Start your answer with [notable] if it is worth telling the team, or with [routine] and why not.'
          : ''
      })`,
    ].join('');
    const runInput: SessionInput = {
      sessionId: runWorkflowId,
      channel: 'mission',
      ownerId: input.ownerId,
      run: { missionWorkflowId: workflowId, missionName: name, shared: settings.shared },
      carried: {
        transcript: [],
        grants: [],
        notices: [],
        gates: [],
        inbox: [
          { messageId: `${runWorkflowId}:goal`, userId: input.ownerId, text: goalText.slice(0, 20_000) },
        ],
      },
    };
    let handle;
    try {
      // Runs have their own workflow type, searchable apart from conversations.
      handle = await wf.startChild<typeof missionRunWorkflow>('missionRunWorkflow', {
        workflowId: runWorkflowId,
        args: [runInput],
        parentClosePolicy: wf.ParentClosePolicy.REQUEST_CANCEL,
      });
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
      return skip(`${trigger} fire skipped: run ${n} could not start (${failureMessage(error)})`);
    }
    const record: RunRecord = {
      n,
      workflowId: runWorkflowId,
      trigger,
      startedAt: Date.now(),
      ...(firedBy && firedBy !== input.ownerId ? { firedBy } : {}),
    };
    runs.push(record);
    if (runs.length > MAX_RUN_RECORDS) runs.splice(0, runs.length - MAX_RUN_RECORDS);
    running = { workflowId: runWorkflowId, n };
    if (record.firedBy)
      void notifyOwner({
        text: `**${name}** run ${n} was started by @${record.firedBy}; it acts as you, with your approvals and accounts.`,
      });
    // Never awaited: whatever happens here is recorded and told, never left as an unhandled rejection.
    // `recording` lasts until the run's end is recorded and told: a continue-as-new waits for it.
    recording++;
    void handle
      .result()
      .then(
        (result) => finishRun(record, result as RunResult | undefined),
        (error: unknown) => failRun(record, error),
      )
      .catch((error: unknown) =>
        wf.log.error('recording a run failed', { missionId, run: record.n, error: String(error) }),
      )
      .finally(() => recording--);
  }

  /** A run that ends with its gate still open (cancelled while waiting): the prompt shown to the owner closes. */
  async function closeOpenGate(record: RunRecord): Promise<void> {
    const open = openGate;
    openGate = null;
    if (!open) return;
    const closed: Gate = {
      ...open,
      status: 'cancelled',
      resolution: { outcome: 'cancelled', by: 'system', at: Date.now() },
    };
    await notifyOwner({
      gate: closed,
      resolved: true,
      outcome: `cancelled: run ${record.n} ended`,
      runWorkflowId: record.workflowId,
    });
  }

  async function finishRun(record: RunRecord, result: RunResult | undefined): Promise<void> {
    record.endedAt = Date.now();
    running = null;
    gate = null;
    await closeOpenGate(record);
    const answer = result?.answer ?? '';
    if (status === 'failed') return await endFailedRun(record); // a denied gate ended it, whatever it said after
    if (!result?.ok) return await countFailure(record, result?.reason ?? 'the run did not finish its goal');
    record.outcome = 'ok';
    record.summary = answer.slice(0, 300);
    consecutiveFailures = 0;
    if (status === 'paused' && reason?.startsWith(`run ${record.n} waits`)) setStatus('active', null);
    const routine = /^\s*\[routine\]/i.test(answer);
    if (settings.notifyMode === 'notable' && routine) return;
    await notify({ text: `**${name}** (run ${record.n}): ${answer.replace(/^\s*\[notable\]\s*/i, '')}` });
  }

  async function failRun(record: RunRecord, error: unknown): Promise<void> {
    record.endedAt = Date.now();
    running = null;
    gate = null;
    await closeOpenGate(record);
    if (status === 'failed') return await endFailedRun(record);
    // Someone cancelled the run (the Temporal UI, the operator CLI): a deliberate stop, so the mission fails.
    if (wf.isCancellation(error) && status !== 'completed') {
      setStatus('failed', `run ${record.n} was cancelled`);
      return await endFailedRun(record);
    }
    const message =
      error instanceof wf.ChildWorkflowFailure && error.cause ? error.cause.message : String(error);
    await countFailure(record, message);
  }

  async function endFailedRun(record: RunRecord): Promise<void> {
    record.outcome = 'cancelled';
    record.summary = reason ?? 'cancelled';
    await notifyOwner({
      text: `**${name}** failed: ${reason}. mission_resume "${name}" makes it active again.`,
    });
  }

  async function countFailure(record: RunRecord, why: string): Promise<void> {
    record.outcome = 'failed';
    record.summary = why.slice(0, 300);
    consecutiveFailures++;
    if (consecutiveFailures >= input.guardrails.maxConsecutiveFailures && status === 'active') {
      setStatus('paused', `paused after ${consecutiveFailures} failed runs in a row; last: ${why}`);
      await notifyOwner({
        text: `**${name}** is paused: ${consecutiveFailures} runs in a row failed. Last error: ${why}`,
      });
    } else await notify({ text: `**${name}** run ${record.n} failed: ${why}` });
  }

  /**
   * The next cron time. If it cannot be computed after the activity's retries, the mission pauses with the
   * reason and tells its owner; resuming it tries again.
   */
  async function scheduleNext(): Promise<number | null> {
    const cadence = settings.cadence as { expression: string; timezone: string };
    try {
      return await nextFireTime({
        expression: cadence.expression,
        timezone: cadence.timezone,
        after: Date.now(),
      });
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
      const why = `its next run time could not be computed (${failureMessage(error)})`;
      if (status === 'active') setStatus('paused', `paused: ${why}`);
      await notifyOwner({
        text: `**${name}** is paused: ${why}. mission_resume "${name}" tries again.`,
      });
      return null;
    }
  }

  publish();
  const completed = (): boolean => status === 'completed';
  const current = (): typeof running => running;
  while (!completed()) {
    if (scheduleChanged) {
      scheduleChanged = false;
      nextFireAt = settings.cadence.kind === 'cron' ? await scheduleNext() : null;
    }
    const wait = nextFireAt === null ? undefined : Math.max(0, nextFireAt - Date.now());
    // A deploy's request to move waits for the run in flight: a continue-as-new would cancel it (parent close policy).
    const moves = () => upgradeRequested() && !running && recording === 0;
    const woke = () => fires.length > 0 || scheduleChanged || status === 'completed' || moves();
    if (wait === undefined) await wf.condition(woke);
    else await wf.condition(woke, wait);
    if (completed()) break;
    if (nextFireAt !== null && Date.now() >= nextFireAt) {
      // However many fires were missed while nothing ran, this is one (catch-up) run.
      const trigger = Date.now() - nextFireAt > LATE_AFTER_MS ? 'catch-up' : 'cron';
      nextFireAt = await scheduleNext();
      await tryStart(trigger);
    }
    while (fires.length) {
      const fire = fires.shift()!;
      await tryStart(fire.trigger, fire.context, fire.trigger === 'manual' ? fire.by : undefined);
    }
    if (
      !running &&
      recording === 0 &&
      (upgradeRequested() ||
        wf.workflowInfo().continueAsNewSuggested ||
        wf.workflowInfo().historyLength > EVENTS_BEFORE_CONTINUE)
    ) {
      await wf.condition(wf.allHandlersFinished);
      return await continueOnCurrentVersion<typeof missionWorkflow>({
        ...input,
        name,
        settings,
        carried: { status, reason, runs, skipped, consecutiveFailures, runCount },
      });
    }
  }
  const last = current();
  if (last)
    await wf
      .getExternalWorkflowHandle(last.workflowId)
      .cancel()
      .catch(() => {});
  publish();
}

function failureMessage(error: unknown): string {
  return (error instanceof wf.ActivityFailure || error instanceof wf.ChildWorkflowFailure) && error.cause
    ? error.cause.message
    : error instanceof Error
      ? error.message
      : String(error);
}
