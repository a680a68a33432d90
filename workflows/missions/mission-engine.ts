/**
 * The engine of one mission workflow (named apart from its runs, the child workflows it fires): its state, what
 * each signal does to it, and the loop that fires runs. The workflow (workflow.ts) registers one-line handlers that
 * call these methods; nothing outside writes its fields.
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
import {
  AgentMissionName,
  AgentMissionStatus,
  AgentOwner,
  AgentSharedMission,
} from '../../common/search-attributes';
import type { MissionStatus } from '../../common/missions/types';
import { missionDirectoryId, missionRunPrefix, missionRunWorkflowId } from '../../common/ids';
import { missionEventSignal, type Gate, type MissionEvent } from '../session/contract';
import { describeOutcome, describeWaiting } from '../../common/gates/words';
import type { missionRunWorkflow } from '../session/workflow';
import { continueOnCurrentVersion, timeToContinue, upgradeRequested } from '../upgrade';
import {
  missionCreationCall,
  missionRecordSignal,
  type FireRequest,
  type MissionInput,
  type MissionSettings,
  type MissionView,
  type RecordedGate,
  type RunEnd,
  type RunRecord,
  type RunResult,
} from './contract';
import { runInput } from './run-input';
import { auditChangeOf } from '../../common/audit';
import { SealedWord } from '../sealed-word';
import { auditsInFlight, auditsWritten, recordInTrail } from '../audit-trail';

const { nextFireTime, workflowEnded, registeredSearchAttributes } = wf.proxyActivities<
  ReturnType<typeof createActivities>
>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 5 },
});

const MAX_RUN_RECORDS = 20;
const MAX_SKIP_RECORDS = 20;
const MAX_DECISIONS = 10;
/** Fire ids remembered: far more than the fires one sender could send again while it retries. */
const MAX_FIRE_IDS = 50;
const LATE_AFTER_MS = 60_000;
const EVENTS_BEFORE_CONTINUE = 5_000;
const OK_OUTCOMES = new Set(['approved', 'edited', 'always', 'answered', 'connected']);

/** A change as it was sent, with its seal: what the audit checks before it names the owner. */
export interface SentChange {
  signal: string;
  sent: unknown;
  seal: unknown;
}

type MissionNotice = Omit<MissionEvent, 'missionId' | 'missionName'>;
type RunGateReport = {
  runWorkflowId: string;
  gate: Gate;
  resolved: boolean;
  outcome?: string;
  reminder?: boolean;
};

export class MissionEngine {
  private readonly missionId: string;
  private readonly workflowId = wf.workflowInfo().workflowId;
  private name: string;
  private readonly settings: MissionSettings;
  private status: MissionStatus;
  private reason: string | null;
  private readonly runs: RunRecord[];
  private readonly skipped: { at: number; reason: string }[];
  private consecutiveFailures: number;
  private runCount: number;
  private running: { workflowId: string; n: number } | null;
  /** Ends of runs told (by the run's signal, or its child result in the execution that started it), to record. */
  private readonly ended: RunEnd[] = [];
  private gate: RecordedGate | null;
  /** The open gate as the run reported it, to close it in the owner's conversation if the run ends first. */
  private openGate: Gate | null;
  private nextFireAt: number | null = null;
  private scheduleChanged = true;
  private readonly fires: FireRequest[] = [];
  /** The ids of the latest fires taken (MAX_FIRE_IDS), carried across continue-as-new. */
  private readonly fireIds: string[];
  /** Seals of changes believed (MAC → when made), carried until they expire. */
  private readonly sealedWord: SealedWord;
  /** Whether the namespace has AgentSharedMission (asked once per execution; a hand-made namespace may not). */
  private findable = false;

  constructor(private readonly input: MissionInput) {
    const carried = input.carried;
    this.missionId = input.id;
    this.name = input.name;
    this.settings = { ...input.settings };
    this.status = carried?.status ?? 'active';
    this.reason = carried?.reason ?? null;
    this.runs = [...(carried?.runs ?? [])];
    this.skipped = [...(carried?.skipped ?? [])];
    this.consecutiveFailures = carried?.consecutiveFailures ?? 0;
    this.runCount = carried?.runCount ?? 0;
    // A run in flight when the mission continued as new goes on; its end arrives as `runEnded`.
    this.running = carried?.running ?? null;
    this.gate = carried?.gate ?? null;
    this.openGate = carried?.openGate ?? null;
    this.fireIds = [...(carried?.fireIds ?? [])];
    this.sealedWord = new SealedWord(carried?.usedSeals);
  }

  view(): MissionView {
    return {
      id: this.missionId,
      name: this.name,
      ownerId: this.input.ownerId,
      settings: this.settings,
      guardrails: this.input.guardrails,
      status: this.status,
      reason: this.reason,
      runs: this.runs,
      skipped: this.skipped,
      consecutiveFailures: this.consecutiveFailures,
      running: this.running?.workflowId ?? null,
      gate: this.gate,
      nextFireAt: this.nextFireAt,
      fireIds: this.fireIds,
    };
  }

  // ---- signals ----

  onFire(request: FireRequest): void {
    if (request.fireId !== undefined) {
      // Sent again by a sender that could not know it arrived: the first one counted, this one is not a fire.
      if (this.fireIds.includes(request.fireId)) return;
      this.fireIds.push(request.fireId);
      if (this.fireIds.length > MAX_FIRE_IDS) this.fireIds.splice(0, this.fireIds.length - MAX_FIRE_IDS);
    }
    if (request.trigger === 'webhook' && this.settings.cadence.kind !== 'webhook')
      return this.skip(`webhook call refused: the cadence is ${this.settings.cadence.kind}`, request.fireId);
    if (request.trigger === 'manual' && request.by !== this.input.ownerId) {
      // Others may run a shared mission as its owner wrote it, never add to the instructions of a run acting as them.
      if (!this.settings.shared)
        return this.skip(`fire by @${request.by} refused: the mission is not shared`, request.fireId);
      const { context: _dropped, ...asWritten } = request;
      return void this.fires.push(asWritten);
    }
    this.fires.push(request);
  }

  onPause(by: string, why: string | undefined, sent?: SentChange): void {
    if (this.status === 'completed' || !this.byOwner(by, 'pause')) return;
    this.setStatus('paused', why ? `paused by @${by}: ${why}` : `paused by @${by}`);
    this.audit('paused', by, { reason: why }, sent);
  }

  onResume(by: string, sent?: SentChange): void {
    if (this.status === 'completed' || !this.byOwner(by, 'resume')) return;
    // A manual resume clears the failure count, and a recorded gate unless a run still waits on it: that wait
    // stays true (the waiting line, no new run meanwhile), and its decision still counts (a deny fails the mission).
    if (this.gate?.runWorkflowId !== this.running?.workflowId) this.gate = null;
    this.consecutiveFailures = 0;
    this.setStatus('active', null);
    this.scheduleChanged = true;
    wf.log.info('mission resumed', { missionId: this.missionId, by });
    this.audit('resumed', by, {}, sent);
  }

  onComplete(by: string, why: string | undefined, sent?: SentChange): void {
    if (!this.byOwner(by, 'complete')) return;
    this.setStatus('completed', why ? `completed by @${by}: ${why}` : `completed by @${by}`);
    this.audit('completed', by, { reason: why }, sent);
  }

  onUpdate(
    by: string,
    newName: string | undefined,
    changes: Partial<MissionSettings>,
    sent?: SentChange,
  ): void {
    if (!this.byOwner(by, 'update')) return;
    if (newName) this.name = newName;
    Object.assign(this.settings, changes);
    this.scheduleChanged = true;
    void this.publish();
    this.audit('updated', by, { changes: { ...(newName ? { name: newName } : {}), ...changes } }, sent);
  }

  onRunGate({ runWorkflowId, gate: runGate, resolved, outcome, reminder }: RunGateReport): void {
    const running = this.running;
    if (running?.workflowId !== runWorkflowId) return;
    if (!resolved && reminder)
      return void this.notifyOwner({ gate: runGate, resolved: false, runWorkflowId, reminder });
    if (!resolved) return this.gateOpened(running.n, runGate, runWorkflowId);
    if (this.openGate?.id === runGate.id) this.openGate = null;
    this.recordDecision(runWorkflowId, runGate);
    void this.notifyOwner({
      gate: runGate,
      resolved: true,
      outcome: outcome ?? describeOutcome(runGate),
      runWorkflowId,
    });
    if (this.gate?.gateId !== runGate.id) return;
    this.gate = null;
    const result = runGate.resolution?.outcome ?? 'cancelled';
    if (OK_OUTCOMES.has(result)) {
      if (this.status === 'paused' && this.reason?.startsWith(`run ${running.n} waits`))
        this.setStatus('active', null);
      return;
    }
    // Denied, expired, superseded or cancelled: the run ends here and the mission fails with the reason (a
    // mission its owner completed meanwhile stays completed).
    const why = `run ${running.n}: ${runGate.toolName} ${describeOutcome(runGate)}${runGate.resolution?.reason ? ` (${runGate.resolution.reason})` : ''}`;
    if (this.status !== 'completed') this.setStatus('failed', why);
    void wf
      .getExternalWorkflowHandle(running.workflowId)
      .cancel()
      .catch(() => {});
  }

  /** Who decided what on a run's gate, kept with the run's record (the latest MAX_DECISIONS). */
  private recordDecision(runWorkflowId: string, gate: Gate): void {
    const record = this.runs.find((r) => r.workflowId === runWorkflowId);
    if (!record) return;
    const decision = {
      tool: gate.toolName,
      outcome: gate.resolution?.outcome ?? gate.status,
      by: gate.resolution?.by ?? 'system',
      at: gate.resolution?.at ?? Date.now(),
    };
    record.decisions = [...(record.decisions ?? []), decision].slice(-MAX_DECISIONS);
  }

  /** A run refused someone's click on its gate: they clicked in the conversation this mission reports to. */
  /** A run told its end (it may have been started by this mission's previous execution). */
  onRunEnded(end: RunEnd): void {
    if (end.runWorkflowId === this.running?.workflowId) this.ended.push(end);
  }

  onRunNotice(runWorkflowId: string, text: string, to: string): void {
    if (!runWorkflowId.startsWith(missionRunPrefix(this.missionId))) return;
    void this.notifyOwner({ notice: { text, to }, runWorkflowId });
  }

  // ---- the loop ----

  async run(): Promise<void> {
    // Its first execution: the mission was just created (by its owner, through the mission tools).
    if (!this.input.carried) {
      const { signal, payload } = missionCreationCall(this.input);
      this.audit(
        'created',
        this.input.ownerId,
        { changes: { ...this.settings } },
        { signal, sent: payload, seal: this.input.createdSeal },
      );
    }
    this.findable = await registeredSearchAttributes().then(
      (names) => names.includes(AgentSharedMission.name),
      (error: unknown) => {
        if (wf.isCancellation(error)) throw error;
        return false;
      },
    );
    void this.publish();
    while (!this.completed()) {
      if (this.scheduleChanged) {
        this.scheduleChanged = false;
        this.nextFireAt = this.settings.cadence.kind === 'cron' ? await this.scheduleNext() : null;
      }
      // While a run is in flight a cron tick could only be skipped: no timer is armed, so a run that waits days on
      // a person adds nothing to this history; the ticks it covered are recorded once, when it ends.
      const wait =
        this.running || this.nextFireAt === null ? undefined : Math.max(0, this.nextFireAt - Date.now());
      const woke = () =>
        this.fires.length > 0 ||
        this.ended.length > 0 ||
        this.scheduleChanged ||
        this.status === 'completed' ||
        upgradeRequested();
      if (wait === undefined) await wf.condition(woke);
      else await wf.condition(woke, wait);
      if (this.completed()) break;
      while (this.ended.length) await this.recordEnd(this.ended.shift()!);
      await this.fireDue();
      if (this.mayContinueAsNew()) {
        // One condition: a handler that starts while records are written is waited for too.
        await wf.condition(() => wf.allHandlersFinished() && auditsInFlight() === 0);
        // A fire or a run's end told meanwhile is handled here first: neither is carried.
        if (this.ended.length || this.fires.length) continue;
        return await continueOnCurrentVersion<(input: MissionInput) => Promise<void>>({
          ...this.input,
          name: this.name,
          settings: this.settings,
          carried: {
            status: this.status,
            reason: this.reason,
            runs: this.runs,
            skipped: this.skipped,
            consecutiveFailures: this.consecutiveFailures,
            runCount: this.runCount,
            // A run in flight goes on (its parent close policy is ABANDON) and tells the next execution its end.
            running: this.running,
            gate: this.gate,
            openGate: this.openGate,
            fireIds: this.fireIds,
            ...(this.sealedWord.carry() ? { usedSeals: this.sealedWord.carry() } : {}),
          },
        });
      }
    }
    const last = this.running;
    if (last) {
      // The run is cancelled and this workflow ends now: its prompt to the owner is closed here, as no later end
      // of the run reaches a mission that has ended.
      const record = this.runs.find((r) => r.workflowId === last.workflowId);
      await this.closeOpenGate(
        record ?? { n: last.n, workflowId: last.workflowId },
        'the mission was completed',
      );
      await wf
        .getExternalWorkflowHandle(last.workflowId)
        .cancel()
        .catch(() => {});
    }
    // Awaited: the server drops a signal whose sender has closed by the time it is sent.
    await this.publish();
    await auditsWritten();
  }

  /** A method, not a field test: the compiler would narrow the field across the loop's awaits. */
  private completed(): boolean {
    return this.status === 'completed';
  }

  /** A run just ended: the cron times that passed while it went are skipped (one record), not caught up. */
  private async skipTicksCoveredBy(n: number): Promise<void> {
    if (this.nextFireAt === null || Date.now() < this.nextFireAt) return;
    this.skip(`cron fires due since ${utcMinute(this.nextFireAt)} skipped: run ${n} was still going`);
    this.nextFireAt = await this.scheduleNext();
  }

  /** The cron fire that is due (however many were missed while nothing ran, one catch-up run), then queued fires. */
  private async fireDue(): Promise<void> {
    if (this.nextFireAt !== null && Date.now() >= this.nextFireAt) {
      const trigger = Date.now() - this.nextFireAt > LATE_AFTER_MS ? 'catch-up' : 'cron';
      this.nextFireAt = await this.scheduleNext();
      await this.tryStart(trigger);
    }
    if (this.fires.length) await this.checkRunStillGoing();
    while (this.fires.length) {
      const fire = this.fires.shift()!;
      await this.tryStart(
        fire.trigger,
        fire.context,
        fire.trigger === 'manual' ? fire.by : undefined,
        fire.fireId,
      );
    }
  }

  /**
   * A fire finds a run in flight: is it really still going? A run terminated (not cancelled) tells nobody its end,
   * and the execution that started it (whose child result would) may have continued as new since; without this
   * check such a mission would refuse every fire for ever.
   */
  private async checkRunStillGoing(): Promise<void> {
    const running = this.running;
    if (!running) return;
    const checked = await workflowEnded({ workflowId: running.workflowId }).catch((error: unknown) => {
      if (wf.isCancellation(error)) throw error;
      return undefined;
    });
    if (!checked?.ended || this.running !== running) return;
    await this.recordEnd({
      runWorkflowId: running.workflowId,
      failure: {
        message: `run ${running.n} ended without telling its mission (${checked.status.toLowerCase()})`,
        // Cancelled is a deliberate stop (the mission fails); terminated counts as a failed run.
        cancelled: checked.status === 'CANCELED',
      },
    });
  }

  /** At any point, also while a run waits on a person: the run goes on and tells the next execution its end. */
  private mayContinueAsNew(): boolean {
    return timeToContinue(EVENTS_BEFORE_CONTINUE);
  }

  /** A run's end, told once (its signal and, in the execution that started it, its child result may both come). */
  private async recordEnd(end: RunEnd): Promise<void> {
    const running = this.running;
    if (running?.workflowId !== end.runWorkflowId) return;
    const record = this.runs.find((r) => r.workflowId === end.runWorkflowId) ?? {
      n: running.n,
      workflowId: running.workflowId,
      trigger: 'manual' as const,
      startedAt: Date.now(),
    };
    if (end.failure) await this.failRun(record, end.failure);
    else await this.finishRun(record, end.result);
    await this.skipTicksCoveredBy(running.n);
  }

  // ---- runs ----

  private gateOpened(n: number, runGate: Gate, runWorkflowId: string): void {
    this.openGate = runGate;
    this.gate = {
      gateId: runGate.id,
      kind: runGate.kind,
      tool: runGate.toolName,
      needed: describeWaiting([runGate]),
      runWorkflowId,
    };
    if (this.status === 'active') this.setStatus('paused', `run ${n} waits for ${this.gate.needed}`);
    void this.notifyOwner({ gate: runGate, resolved: false, runWorkflowId });
  }

  /** Why a fire may not start a run now, if it may not. */
  private refusal(trigger: RunRecord['trigger']): string | undefined {
    const { guardrails } = this.input;
    if (this.status !== 'active')
      return `${trigger} fire skipped: the mission is ${this.status}${this.reason ? ` (${this.reason})` : ''}`;
    if (this.running) return `${trigger} fire skipped: run ${this.running.n} is still going`;
    const runsInLastDay = this.runs.filter((r) => r.startedAt > Date.now() - 24 * 3_600_000).length;
    if (runsInLastDay >= guardrails.maxRunsPerDay)
      return `${trigger} fire skipped: at most ${guardrails.maxRunsPerDay} runs a day`;
    const last = this.runs.at(-1);
    if (last && Date.now() - last.startedAt < guardrails.cooldownMs)
      return `${trigger} fire skipped: cooldown (${Math.round(guardrails.cooldownMs / 1000)} s between runs)`;
    return undefined;
  }

  private async tryStart(
    trigger: RunRecord['trigger'],
    context?: string,
    firedBy?: string,
    fireId?: string,
  ): Promise<void> {
    const refused = this.refusal(trigger);
    if (refused) return this.skip(refused, fireId);
    const n = ++this.runCount;
    const runWorkflowId = missionRunWorkflowId(this.missionId, n);
    let handle;
    try {
      // Runs have their own workflow type, searchable apart from conversations.
      handle = await wf.startChild<typeof missionRunWorkflow>('missionRunWorkflow', {
        workflowId: runWorkflowId,
        args: [
          runInput({
            runWorkflowId,
            missionWorkflowId: this.workflowId,
            ownerId: this.input.ownerId,
            name: this.name,
            settings: this.settings,
            n,
            trigger,
            context,
          }),
        ],
        // Not cancelled when this mission continues as new (it may, while a run waits days on a person); completing
        // the mission cancels it explicitly.
        parentClosePolicy: wf.ParentClosePolicy.ABANDON,
      });
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
      return this.skip(
        `${trigger} fire skipped: run ${n} could not start (${failureMessage(error)})`,
        fireId,
      );
    }
    const record: RunRecord = {
      n,
      workflowId: runWorkflowId,
      trigger,
      startedAt: Date.now(),
      ...(firedBy && firedBy !== this.input.ownerId ? { firedBy } : {}),
      ...(fireId ? { fireId } : {}),
    };
    this.runs.push(record);
    if (this.runs.length > MAX_RUN_RECORDS) this.runs.splice(0, this.runs.length - MAX_RUN_RECORDS);
    this.running = { workflowId: runWorkflowId, n };
    if (record.firedBy)
      void this.notifyOwner({
        text: `**${this.name}** run ${n} was started by @${record.firedBy}; it acts as you, with your approvals and accounts.`,
      });
    // The run tells its end by signal; its child result is a second way while this execution lasts (a run that
    // was terminated tells nothing). Whichever comes first is recorded, once (recordEnd).
    void handle.result().then(
      (result) => this.onRunEnded({ runWorkflowId, result: result as RunResult }),
      (error: unknown) =>
        this.onRunEnded({
          runWorkflowId,
          failure: { message: failureMessage(error), cancelled: wf.isCancellation(error) },
        }),
    );
  }

  /** A run that ends with its gate still open (cancelled while waiting): the prompt shown to the owner closes. */
  private async closeOpenGate(
    record: Pick<RunRecord, 'n' | 'workflowId'>,
    why = `run ${record.n} ended`,
  ): Promise<void> {
    const open = this.openGate;
    this.openGate = null;
    if (!open) return;
    const closed: Gate = {
      ...open,
      status: 'cancelled',
      resolution: { outcome: 'cancelled', by: 'system', at: Date.now() },
    };
    await this.notifyOwner({
      gate: closed,
      resolved: true,
      outcome: `cancelled: ${why}`,
      runWorkflowId: record.workflowId,
    });
  }

  private async finishRun(record: RunRecord, result: RunResult | undefined): Promise<void> {
    record.endedAt = Date.now();
    this.running = null;
    this.gate = null;
    await this.closeOpenGate(record);
    const answer = result?.answer ?? '';
    if (this.status === 'failed') return await this.endFailedRun(record); // a denied gate ended it, whatever it said after
    if (!result?.ok)
      return await this.countFailure(record, result?.reason ?? 'the run did not finish its goal');
    record.outcome = 'ok';
    record.summary = answer.slice(0, 300);
    this.consecutiveFailures = 0;
    if (this.status === 'paused' && this.reason?.startsWith(`run ${record.n} waits`))
      this.setStatus('active', null);
    const routine = /^\s*\[routine\]/i.test(answer);
    if (this.settings.notifyMode === 'notable' && routine) return;
    await this.notify({
      text: `**${this.name}** (run ${record.n}): ${answer.replace(/^\s*\[notable\]\s*/i, '')}`,
    });
  }

  private async failRun(record: RunRecord, failure: NonNullable<RunEnd['failure']>): Promise<void> {
    record.endedAt = Date.now();
    this.running = null;
    this.gate = null;
    await this.closeOpenGate(record);
    if (this.status === 'failed') return await this.endFailedRun(record);
    // Someone cancelled the run (the Temporal UI, the operator CLI): a deliberate stop, so the mission fails.
    if (failure.cancelled && this.status !== 'completed') {
      this.setStatus('failed', `run ${record.n} was cancelled`);
      return await this.endFailedRun(record);
    }
    // No longer waiting on that run's gate: a failed run counts as such (and may pause the mission itself).
    if (this.status === 'paused' && this.reason?.startsWith(`run ${record.n} waits`))
      this.setStatus('active', null);
    await this.countFailure(record, failure.message);
  }

  private async endFailedRun(record: RunRecord): Promise<void> {
    record.outcome = 'cancelled';
    record.summary = this.reason ?? 'cancelled';
    await this.notifyOwner({
      text: `**${this.name}** failed: ${this.reason}. mission_resume "${this.name}" makes it active again.`,
    });
  }

  private async countFailure(record: RunRecord, why: string): Promise<void> {
    record.outcome = 'failed';
    record.summary = why.slice(0, 300);
    this.consecutiveFailures++;
    const { maxConsecutiveFailures } = this.input.guardrails;
    if (this.consecutiveFailures >= maxConsecutiveFailures && this.status === 'active') {
      this.setStatus('paused', `paused after ${this.consecutiveFailures} failed runs in a row; last: ${why}`);
      await this.notifyOwner({
        text: `**${this.name}** is paused: ${this.consecutiveFailures} runs in a row failed. Last error: ${why}`,
      });
    } else await this.notify({ text: `**${this.name}** run ${record.n} failed: ${why}` });
  }

  /**
   * The next cron time. If it cannot be computed after the activity's retries, the mission pauses with the
   * reason and tells its owner; resuming it tries again.
   */
  private async scheduleNext(): Promise<number | null> {
    const cadence = this.settings.cadence as { expression: string; timezone: string };
    try {
      return await nextFireTime({
        expression: cadence.expression,
        timezone: cadence.timezone,
        after: Date.now(),
      });
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
      const why = `its next run time could not be computed (${failureMessage(error)})`;
      if (this.status === 'active') this.setStatus('paused', `paused: ${why}`);
      await this.notifyOwner({
        text: `**${this.name}** is paused: ${why}. mission_resume "${this.name}" tries again.`,
      });
      return null;
    }
  }

  // ---- state and telling ----

  /**
   * Only the owner changes, pauses, resumes or completes the mission: its runs act as them. The tools refuse
   * others with a message; this holds against a signal sent straight at the workflow too.
   */
  /**
   * A change its owner made, in the audit trail (workflows/audit-trail.ts). Named as the owner's own only when the
   * mission tools sealed it (the worker's seal, checked by the worker): anyone who reaches Temporal can send these
   * signals, and then the record says it is not verified. A sealed change copied from history is not believed again.
   */
  private audit(
    action: string,
    by: string,
    extra: { reason?: string | undefined; changes?: Record<string, unknown> } = {},
    sent?: SentChange,
  ): void {
    const at = Date.now();
    const change = {
      type: 'mission' as const,
      workflowId: this.workflowId,
      conversation: 'mission',
      action,
      by,
      reason: extra.reason,
      mission: { id: this.missionId, name: this.name, ...(extra.changes ? { changes: extra.changes } : {}) },
    };
    recordInTrail(
      this.sealedBy(sent).then((sealed) =>
        auditChangeOf({ ...change, ...(sealed ? {} : { unverified: true as const }) }, at),
      ),
    );
  }

  private async sealedBy(sent: SentChange | undefined): Promise<boolean> {
    return sent ? await this.sealedWord.believe(sent.signal, sent.sent, sent.seal) : false;
  }

  private byOwner(by: string, what: string): boolean {
    if (by === this.input.ownerId) return true;
    wf.log.warn('mission change refused: only its owner changes it', { missionId: this.missionId, by, what });
    return false;
  }

  private skip(why: string, fireId?: string): void {
    this.skipped.push({ at: Date.now(), reason: why, ...(fireId ? { fireId } : {}) });
    if (this.skipped.length > MAX_SKIP_RECORDS)
      this.skipped.splice(0, this.skipped.length - MAX_SKIP_RECORDS);
  }

  private setStatus(next: MissionStatus, why: string | null): void {
    this.status = next;
    this.reason = why;
    void this.publish();
  }

  /** Search attributes, memo and the owner's directory; the returned promise settles once the directory was told. */
  private publish(): Promise<void> {
    const shared = this.settings.shared && this.status !== 'completed';
    wf.upsertSearchAttributes([
      { key: AgentOwner, value: this.input.ownerId },
      { key: AgentMissionName, value: this.name },
      { key: AgentMissionStatus, value: this.status },
      ...(this.findable ? [{ key: AgentSharedMission, value: shared ? this.name.toLowerCase() : null }] : []),
    ]);
    wf.upsertMemo({
      waitingFor: this.gate ? `${this.gate.needed} (run ${this.gate.runWorkflowId})` : null,
      reason: this.reason,
    });
    // The whole record, every time: a directory that missed a change (it was moving) is right again at the next one.
    return wf
      .getExternalWorkflowHandle(missionDirectoryId(this.input.ownerId))
      .signal(missionRecordSignal, {
        id: this.missionId,
        ownerId: this.input.ownerId,
        name: this.name,
        status: this.status,
        shared: this.settings.shared,
      })
      .catch(() => {});
  }

  private notify(event: MissionNotice): Promise<void> {
    return this.tell('results', event);
  }

  private notifyOwner(event: MissionNotice): Promise<void> {
    return this.tell('owner', event);
  }

  /**
   * Tells a conversation; a closed one is not an error. Results go where `notify` says (or nowhere);
   * what needs the owner (gates, failures, pauses) goes to the owner's conversation in any case.
   */
  private async tell(to: 'results' | 'owner', event: MissionNotice): Promise<void> {
    // Gates and failures go where the owner last set the mission up (only the owner changes it), so they reach
    // the person its runs act as; missions from before ownerSessionId existed use their notify conversation.
    const { notifySessionId, ownerSessionId } = this.settings;
    const sessionId = to === 'results' ? notifySessionId : (ownerSessionId ?? notifySessionId);
    if (!sessionId) return;
    await wf
      .getExternalWorkflowHandle(sessionId)
      .signal(missionEventSignal, { missionId: this.missionId, missionName: this.name, ...event })
      .catch((error: unknown) =>
        wf.log.warn('mission notification failed', { missionId: this.missionId, error: String(error) }),
      );
  }
}

function failureMessage(error: unknown): string {
  return (error instanceof wf.ActivityFailure || error instanceof wf.ChildWorkflowFailure) && error.cause
    ? error.cause.message
    : error instanceof Error
      ? error.message
      : String(error);
}

const utcMinute = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
