/**
 * Budgets in a turn: every model call's usage is added to the turn, the conversation (or mission run) and,
 * when a daily limit is set, the person's day (a ledger workflow per person, through an activity). Before each
 * model call the limits are checked; a reached one opens a budget gate, an approval gate the requester (unless
 * `budgets.selfApprove` is false) or an approver decides: approving allows one more limit's worth from there,
 * anything else ends the turn with a note. The session never fails on a budget.
 */
import * as wf from '@temporalio/workflow';
import {
  addUsage,
  budgetQuestion,
  continuedFrom,
  NO_SPEND,
  reachedLimit,
  type BudgetCheck,
  type Continued,
  type ModelUsage,
  type ReachedLimit,
  type Spend,
} from '../../common/budgets';
import type { ApprovalGate, CarriedTurn } from './contract';
import { openApprovalGate } from './gates';
import { BUDGET_GATE, describeOutcome, isBudgetGate } from '../../common/gates/words';
import type { Session } from './session';

/** What the current turn spent, and where its per-turn limit was last continued. */
export interface TurnSpend {
  spend: Spend;
  continuedAt?: Continued;
}

export const newTurnSpend = (): TurnSpend => ({ spend: NO_SPEND });

/**
 * Adds a model call's usage to the turn, the conversation and (with a daily limit) the person's day: only that
 * last one waits (on the ledger), so only then is there a promise to await.
 */
export async function countUsage(
  run: Session,
  turn: TurnSpend,
  requesterId: string,
  usage: ModelUsage | undefined,
  model?: string,
): Promise<void> {
  if (!usage) return;
  turn.spend = addUsage(turn.spend, usage);
  run.state.addUsage(usage, model);
  if (run.settings.budgets?.perPersonPerDay) await run.ledger.refresh(run.state, requesterId, { usage });
}

/** With no budgets configured: a budget gate carried over continue-as-new is told, and the turn goes on. */
export function noBudgets(run: Session, carriedGateId: string | undefined): true {
  tellUnused(run, carriedDecision(run, carriedGateId));
  return true;
}

/**
 * Before a model call: while a limit is reached, waits at a budget gate. Returns false when the turn ends
 * there (denied, expired or superseded); the conversation then says why.
 */
export async function withinBudget(
  run: Session,
  turn: TurnSpend,
  requesterId: string,
  wait: (gate: ApprovalGate) => Promise<void>,
  carriedGateId?: string,
): Promise<boolean> {
  const budgets = run.settings.budgets;
  if (!budgets) return noBudgets(run, carriedGateId);
  for (;;) {
    if (budgets.perPersonPerDay && !run.ledger.today(requesterId))
      await run.ledger.refresh(run.state, requesterId, {});
    const reached = reachedLimit(checks(run, turn, requesterId));
    // Read now, after the ledger: a decision made while it was read counts too.
    const carried = carriedDecision(run, carriedGateId);
    carriedGateId = undefined;
    if (!reached) {
      run.gates.cancelBudgetGates();
      tellUnused(run, carried);
      return true;
    }
    const sameLimit = (gate: ApprovalGate) =>
      gate.args.scope === reached.scope && gate.requesterId === requesterId;
    const taken = carried && sameLimit(carried) ? carried : undefined;
    if (!taken) tellUnused(run, carried);
    const gate = openBudgetGate(run, sameLimit, reached, requesterId, taken);
    await wait(gate);
    if (gate.resolution?.outcome !== 'approved') {
      run.state.appendAssistantNote(
        `⏸️ I stopped here: ${budgetQuestion(reached, requesterId).replace(/ Continue with .*$/, '')} The budget was ${describeOutcome(gate)}. Send a message to go on.`,
      );
      run.fail(`stopped at the ${reached.scope} budget (${reached.used})`);
      return false;
    }
    if (reached.scope === 'turn') turn.continuedAt = continuedFrom(turn.spend);
    else if (reached.scope === 'day') await run.ledger.refresh(run.state, requesterId, { raise: true });
    else run.state.continueBudget();
  }
}

function checks(run: Session, turn: TurnSpend, requesterId: string): BudgetCheck[] {
  const budgets = run.settings.budgets ?? {};
  const day = run.ledger.today(requesterId);
  return [
    { scope: 'turn', spend: turn.spend, limit: budgets.perTurn, continuedAt: turn.continuedAt },
    {
      scope: run.runOf ? 'missionRun' : 'conversation',
      spend: run.state.usage,
      limit: run.runOf ? budgets.perMissionRun : budgets.perConversation,
      continuedAt: run.state.budgetContinuedAt,
    },
    { scope: 'day', spend: day ?? NO_SPEND, limit: budgets.perPersonPerDay, continuedAt: day?.continuedAt },
  ];
}

/**
 * The budget gate a turn carried across continue-as-new waited at: read where the carried turn resumes and offered
 * to that turn's first budget check only, so a decision is never reused for a later check or turn.
 */
export const carriedBudgetGateId = (resume: CarriedTurn | undefined): string | undefined =>
  resume?.atBudgetGate ? resume.budgetGateId : undefined;

/**
 * The carried budget gate, if it was decided while the previous run handed over (a pending one is found among the
 * open gates). The first check takes it up when it is about the limit reached then; otherwise (the limit is no
 * longer reached, another one is, budgets are off) it is told, so its prompt shows the decision.
 */
function carriedDecision(run: Session, carriedId: string | undefined): ApprovalGate | undefined {
  const gate = carriedId === undefined ? undefined : run.state.gates.get(carriedId);
  return gate?.kind === 'approval' && isBudgetGate(gate) && gate.status !== 'pending' ? gate : undefined;
}

function tellUnused(run: Session, carried: ApprovalGate | undefined): void {
  if (carried) run.gates.tellDecided(carried);
}

/**
 * The carried gate taken up, the open budget gate of the same limit carried over continue-as-new, or a new one
 * for the limit reached.
 */
function openBudgetGate(
  run: Session,
  sameLimit: (gate: ApprovalGate) => boolean,
  reached: ReachedLimit,
  requesterId: string,
  carried: ApprovalGate | undefined,
): ApprovalGate {
  const open = carried ?? run.gates.openBudgetGates().find(sameLimit);
  run.gates.cancelBudgetGates(open);
  if (open) return open;
  const id = wf.uuid4();
  const gate = openApprovalGate({
    id,
    toolCallId: `budget:${id}`,
    toolName: BUDGET_GATE,
    args: { scope: reached.scope, used: reached.used, more: reached.more },
    subject: budgetQuestion(reached, requesterId),
    requesterId,
    approvers: run.settings.approvers ?? [],
    now: Date.now(),
    timeoutMs: run.settings.questionTimeoutMs ?? 24 * 3_600_000,
    selfApprove: run.settings.budgets?.selfApprove ?? true,
    ...(run.settings.people ? { people: run.settings.people } : {}),
  });
  run.gates.open(gate);
  return gate;
}
