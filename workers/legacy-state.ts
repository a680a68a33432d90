/**
 * What a 0.1 conversation or mission holds, read from its queries, as the input today's code starts from: what a
 * continue-as-new would have carried (workers/legacy.ts).
 */
import type { MissionInput, MissionView } from '../workflows/missions/contract';
import type { CarriedState, CarriedTurn, SessionView } from '../workflows/session/contract';
import { isBudgetGate } from '../common/gates/words';

/** Idle, or waiting on people: nothing of the turn is in flight, nothing queued. */
export function atRest(view: SessionView): boolean {
  return view.channel !== 'mission' && view.status !== 'running' && view.queued === 0;
}

/** What a continue-as-new would have carried, from the 0.1 run's state; open gates resume their turn. */
export function carriedFromView(view: SessionView): CarriedState {
  // A mission run's gate shown here belongs to the run, not to a turn of this conversation: it resumes nothing.
  const pending = view.gates.filter((gate) => gate.status === 'pending' && !gate.remote);
  const lastUser = view.transcript.findLastIndex((m) => m.role === 'user');
  const steps = view.transcript
    .slice(lastUser + 1)
    .filter((m) => m.role === 'assistant' && m.toolCalls.length > 0).length;
  const budgetGate = pending.find((gate) => isBudgetGate(gate));
  const requester = pending[0]?.requesterId ?? view.ownerId;
  const turn: CarriedTurn | undefined = !pending.length
    ? undefined
    : budgetGate
      ? { requesterId: requester, step: steps, atBudgetGate: true, budgetGateId: budgetGate.id }
      : { requesterId: requester, step: Math.max(0, steps - 1) };
  return {
    transcript: view.transcript,
    grants: view.grants,
    inbox: [],
    notices: view.notices,
    gates: view.gates,
    ...(turn ? { turn } : {}),
    ...(view.usage?.calls ? { usage: view.usage } : {}),
  };
}

export function missionInputFromView(view: MissionView): MissionInput {
  return {
    id: view.id,
    name: view.name,
    ownerId: view.ownerId,
    settings: view.settings,
    guardrails: view.guardrails,
    carried: {
      status: view.status,
      reason: view.reason,
      runs: view.runs,
      skipped: view.skipped,
      consecutiveFailures: view.consecutiveFailures,
      runCount: Math.max(0, ...view.runs.map((run) => run.n)),
    },
  };
}
