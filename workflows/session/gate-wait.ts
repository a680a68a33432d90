/**
 * How a turn waits on its open gates (approvals, questions, a sign-in): until each is decided, reminding people on
 * chat platforms while a gate stays open and expiring it at its deadline, or until a long wait has outgrown the
 * history (then the caller continues as new, carrying the open gates).
 *
 * The wait is flat: one pass per wake-up, each with one timer (for the earliest reminder, escalation or expiry
 * among the open gates) and one condition, instead of a wait per gate raced against a second condition. The timer
 * runs in the turn's scope: one a decision made needless is cancelled when the turn ends, not here (`startTimer`).
 */
import * as wf from '@temporalio/workflow';
import type { SessionStatus } from '../../common/search-attributes';
import type { CarriedTurn, Gate } from './contract';
import { escalate, expireGate } from './gates';
import { describeWaiting } from '../../common/gates/words';
import type { Session } from './session';
import { upgradeRequested } from '../upgrade';

/** A wait hands over (continues as new) only once at least this many events arrived during it. */
const MIN_WAIT_EVENTS_BEFORE_CONTINUE = 10;

/**
 * The whole wait at open gates, the one way every step waits on people: the status says what they wait for, the
 * wait (reminders, escalation, expiry), a hand-over mid-wait when the step can be carried (`handOver` gives the turn
 * to carry) and the wait outgrew the history or a deploy asked, then running again. `during` wraps the wait itself
 * (a sign-in's wait is findable by the person's sign-in only while it lasts).
 */
export async function waitAt(
  run: Session,
  gates: Gate[],
  options: { handOver?: () => CarriedTurn; during?: { start(): void; end(): void } } = {},
): Promise<void> {
  run.setStatus(waitingStatus(gates), describeWaiting(gates));
  options.during?.start();
  await waitForGates(run, gates, options.handOver !== undefined);
  if (options.handOver && gates.some((gate) => gate.status === 'pending'))
    await run.handOverMidWait(options.handOver());
  options.during?.end();
  run.setStatus('running');
}

/** What a conversation's status says while these gates are open: an approval first, then a sign-in, then answers. */
function waitingStatus(gates: readonly Gate[]): SessionStatus {
  if (gates.some((gate) => gate.kind === 'approval')) return 'waiting_approval';
  if (gates.every((gate) => gate.kind === 'credential')) return 'waiting_credential';
  return 'waiting_answer';
}

/**
 * Resolves once every gate is decided, or, when `handsOver`, once a long wait has outgrown the history or a deploy
 * asked the run to move (then some gate is still pending and the caller hands over mid-wait).
 */
async function waitForGates(run: Session, gates: Gate[], handsOver: boolean): Promise<void> {
  const longWait = longWaitOver(run, handsOver);
  const reminderMs = reminderInterval(run);
  const remindAt = new Map<Gate, number>();
  const told = new Set<Gate>();
  // One pass per wake-up: expire, tell, escalate and remind, then sleep until the next of those or a decision.
  for (;;) {
    const now = Date.now();
    let due = Infinity;
    for (const gate of gates) {
      if (gate.status === 'pending' && gate.expiresAt !== null && gate.expiresAt <= now)
        expireGate(gate, now);
      if (gate.status !== 'pending') {
        if (!told.has(gate)) run.gates.tellDecided(gate);
        told.add(gate);
        continue;
      }
      const escalated = escalate(gate, now);
      if (escalated) {
        // Told to everyone, and the prompt asked again where it is, naming the people added.
        run.state.notify(escalated);
        run.emit({ type: 'gate', gate, reason: 'repost' });
        run.state.touch();
      }
      if (reminderMs !== undefined) {
        const at = remindAt.get(gate) ?? now + reminderMs;
        if (at <= now) run.emit({ type: 'gate', gate, reason: 'reminder' });
        remindAt.set(gate, at <= now ? now + reminderMs : at);
      }
      const escalation = gate.kind === 'approval' && !gate.escalation?.done ? gate.escalation?.at : undefined;
      due = Math.min(due, gate.expiresAt ?? Infinity, remindAt.get(gate) ?? Infinity, escalation ?? Infinity);
    }
    if (told.size === gates.length || longWait()) return;
    const woken = () => gates.some((gate) => gate.status !== 'pending' && !told.has(gate)) || longWait();
    if (due === Infinity) await wf.condition(woken);
    else {
      // The earliest reminder, escalation or expiry wakes the wait (the turn cancels the timer if a decision came first).
      const timer = startTimer(due - now);
      await wf.condition(() => timer.fired || woken());
    }
  }
}

/**
 * Whether a wait that began now should hand over: a deploy asked this run to move to the current version, or the
 * wait has outgrown the history (only events that arrive during it count).
 */
function longWaitOver(run: Session, handsOver: boolean): () => boolean {
  const eventsAtWaitStart = wf.workflowInfo().historyLength;
  return () =>
    handsOver &&
    (upgradeRequested() ||
      (wf.workflowInfo().historyLength - eventsAtWaitStart >= MIN_WAIT_EVENTS_BEFORE_CONTINUE &&
        run.shouldContinueAsNew()));
}

/**
 * Chat platforms get a reminder (the prompt posted again) while a gate stays open; the web chat shows it live.
 * A mission run's gate is shown in its owner's conversation, which may be a chat platform: it is reminded too.
 */
function reminderInterval(run: Session): number | undefined {
  const reminds =
    run.emitsToPlatform || (run.runOf !== undefined && run.settings.reminderAfterMs !== undefined);
  return reminds ? run.settings.reminderAfterMs : undefined;
}

/**
 * A durable timer in the current scope, which is the turn's when a turn waits on its gates: `fired` once it fires.
 * It is not cancelled when the wait ends first; the turn cancels the timers it leaves when it ends (Turn.steps).
 * Cancelling it here instead would change the order of commands that recorded histories replay (a new Worker
 * Deployment version), for no gain a person would notice.
 */
function startTimer(ms: number): { readonly fired: boolean } {
  const timer = { fired: false };
  wf.sleep(ms).then(
    () => void (timer.fired = true),
    () => undefined, // cancelled with its turn: nothing waits on it any more
  );
  return timer;
}
