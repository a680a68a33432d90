/**
 * One turn, top to bottom: the user's message, then model steps until an answer. Each step asks the model
 * (model-step.ts) and plays its tool calls (tool-step.ts: validated, checked against the policy, gated and run,
 * every call ending with exactly one result). Before each model call the budgets are checked (budget.ts). A turn
 * whose gates stay open across continue-as-new is carried as data (`CarriedTurn`) and resumed by the next run.
 */
import { enterTurn, leaveTurn, type TurnTrace } from '../turn-trace';
import * as wf from '@temporalio/workflow';
import { AgentCredentialWaits } from '../../common/search-attributes';
import { distinctCallIds } from './call-ids';
import {
  carriedBudgetGateId,
  countUsage,
  newTurnSpend,
  noBudgets,
  withinBudget,
  type TurnSpend,
} from './budget';
import type { CarriedTurn, Gate, Message, ToolCall, ToolResultStatus, UserMessage } from './contract';
import { resultWithoutRun } from './gates';
import { waitAt } from './gate-wait';
import { askModel, writtenBeforeStop } from './model-step';
import type { Session } from './session';
import { playToolStep } from './tool-step';
import { bounded, unresolvedToolCalls } from './transcript';

/** The agent loop stops once the same call has failed the same way this many times in one turn. */
const MAX_IDENTICAL_ERRORS = 3;

/** A user's message, answered: the turn is appended, played, and its "working" indicator cleared. */
export function runTurn(run: Session, message: UserMessage): Promise<void> {
  run.state.append({
    role: 'user',
    id: message.messageId,
    userId: message.userId,
    text: message.text,
    at: Date.now(),
  });
  run.state.beginTurn();
  run.setStatus('running');
  if (message.ref) run.emit({ type: 'working', on: true, ref: message.ref, to: message.userId });
  // The same promise as the turn's (no async layer of its own): the indicator is cleared as the turn ends.
  return run.play(new Turn(run, message.userId, { refreshSettings: true }), () => {
    if (message.ref && !run.continuingAsNew) run.emit({ type: 'working', on: false, ref: message.ref });
  });
}

export class Turn {
  /** Stop cancels this scope: the model call is abandoned, a running tool cancelled, and nothing else. */
  private readonly scope = new wf.CancellationScope({ cancellable: true });
  private stoppedByWhom: string | undefined;
  private stepNumber: number;
  /** What this turn has spent, and where its per-turn limit was last continued (budget.ts). */
  private readonly spent: TurnSpend;
  /** Failing calls of this turn by (tool, arguments, error), to stop a loop on the same failure. */
  private readonly failures = new Map<string, number>();
  /** Offered to this turn's first budget check only (then dropped, whether or not it was used). */
  private carriedGateId: string | undefined;
  /** The turn's trace (workflows/turn-trace.ts), carried across continue-as-new. */
  private readonly trace: TurnTrace;

  /**
   * `resume`: a turn carried across continue-as-new, with the calls of the step whose gates were open;
   * `refreshSettings`: read the settings inside the turn (a Stop then cancels that read too).
   */
  constructor(
    private readonly run: Session,
    readonly requesterId: string,
    private readonly options: {
      refreshSettings?: boolean;
      resume?: { calls: ToolCall[] } & CarriedTurn;
    } = {},
  ) {
    this.trace = options.resume?.trace ?? { key: `${Date.now()}:${requesterId}`, startedAt: Date.now() };
    this.stepNumber = options.resume?.step ?? 0;
    this.spent = options.resume?.spend ?? newTurnSpend();
    this.carriedGateId = carriedBudgetGateId(options.resume);
  }

  get step(): number {
    return this.stepNumber;
  }

  get stoppedBy(): string | undefined {
    return this.stoppedByWhom;
  }

  stop(by: string): void {
    this.stoppedByWhom = by;
    this.scope.cancel();
  }

  /** This turn as data, for the next run to resume (`atBudgetGate`: it waits before a model call). */
  carry(budgetGate?: { atBudgetGate: true; budgetGateId: string }): CarriedTurn {
    return {
      requesterId: this.requesterId,
      step: this.stepNumber,
      trace: this.trace,
      ...budgetGate,
      ...(this.spent.spend.calls ? { spend: this.spent } : {}),
    };
  }

  /**
   * Runs the turn in its own cancellation scope, so Stop cancels this turn and nothing else: its open gates close
   * as stopped, queued messages stay queued, and the conversation goes on with the next one. A cancellation of
   * the whole workflow still ends it.
   */
  play(done: () => void): Promise<void> {
    enterTurn(this.run.sessionId, this.trace);
    return this.scope.run(() =>
      this.steps(() => {
        leaveTurn();
        done();
      }),
    );
  }

  /** A turn that ended by Stop keeps what the model had written, marked; any other failure is thrown again. */
  private afterCancellation(error: unknown): void {
    const stoppedBy = this.stoppedByWhom;
    // Stopped, and only stopped: a cancellation of the whole workflow (this scope's parent) still ends it.
    if (!stoppedBy || !wf.isCancellation(error) || this.scope.parent?.consideredCancelled) throw error;
    // What the model had written stays, marked, as it stays in the chat message and on the page.
    const written = writtenBeforeStop(error);
    if (written)
      this.run.state.append({
        role: 'assistant',
        id: wf.uuid4(),
        text: bounded(`${written} (stopped)`),
        toolCalls: [],
        at: Date.now(),
        stopped: true,
      });
    this.run.state.appendAssistantNote(`⏹️ Stopped by @${stoppedBy}.`);
  }

  /**
   * The model loop (one model call and its tool calls per step); a resumed turn first finishes the step whose gates
   * were open, a new one first reads the settings. The turn's end, `done`, is called here too.
   */
  private async steps(done: () => void): Promise<void> {
    const { run } = this;
    const { state } = run;
    const resume = this.options.resume;
    try {
      if (this.options.refreshSettings) await run.refreshSettings();
      // Resumed at a budget gate: the model call it waited before is next.
      if (resume && !resume.atBudgetGate) {
        await playToolStep(run, this, resume.calls);
        this.stepNumber++;
      }
      while (!state.supersededTurn && !this.atStepLimit()) {
        const within = run.settings.budgets
          ? await withinBudget(
              run,
              this.spent,
              this.requesterId,
              (g) => this.waitAtBudget(g),
              this.carriedGateId,
            )
          : noBudgets(run, this.carriedGateId);
        this.carriedGateId = undefined;
        if (!within) break;
        const reply = await askModel(run, this.requesterId);
        if (!reply) break;
        await countUsage(run, this.spent, this.requesterId, reply.usage, reply.model);
        const calls = this.withDistinctIds(reply.toolCalls);
        state.append({
          role: 'assistant',
          id: wf.uuid4(),
          text: bounded(reply.text),
          toolCalls: calls,
          at: Date.now(),
          ...(reply.streamRef ? { streamRef: reply.streamRef } : {}),
          ...(reply.model ? { model: reply.model } : {}),
        });
        if (calls.length === 0) break;
        await playToolStep(run, this, calls);
        this.stepNumber++;
        if (this.stoppedOnRepeat(calls)) break;
      }
    } catch (error) {
      if (wf.isCancellation(error) && this.stoppedByWhom) this.closeStopped(this.stoppedByWhom);
      else if (wf.isCancellation(error))
        this.closeUnresolved('cancelled', 'cancelled: the session was cancelled before this call finished.');
      this.afterCancellation(error);
    } finally {
      if (!run.continuingAsNew) {
        run.setStatus('idle');
        // Gate waits leave their timers running when a decision comes first (gate-wait.ts): they end here.
        this.scope.cancel();
      }
      done();
    }
  }

  /** The step limit reached: the turn ends with a note saying so. */
  private atStepLimit(): boolean {
    const { run } = this;
    if (this.stepNumber < run.settings.maxSteps) return false;
    run.state.appendAssistantNote(
      `I stopped after ${run.settings.maxSteps} steps (the step limit) without a final answer. Tell me how to continue.`,
    );
    run.fail(`stopped at the step limit (${run.settings.maxSteps} steps)`);
    return true;
  }

  /** The same call failed the same way too often this turn: the turn ends with a note saying so. */
  private stoppedOnRepeat(calls: ToolCall[]): boolean {
    const repeated = this.repeatedFailure(calls);
    if (!repeated) return false;
    this.run.state.appendAssistantNote(
      `I stopped: ${repeated.name} failed the same way ${MAX_IDENTICAL_ERRORS} times (${repeated.content.slice(0, 300)}). Tell me how to proceed.`,
    );
    this.run.fail(
      `${repeated.name} failed the same way ${MAX_IDENTICAL_ERRORS} times: ${repeated.content.slice(0, 200)}`,
    );
    return true;
  }

  private async waitAtBudget(gate: Gate): Promise<void> {
    await waitAt(this.run, [gate], {
      handOver: () => this.carry({ atBudgetGate: true, budgetGateId: gate.id }),
    });
  }

  /** The reply's calls with ids no earlier call, gate or other call of the reply has (call-ids.ts). */
  private withDistinctIds(calls: ToolCall[]): ToolCall[] {
    if (!calls.length) return calls;
    const { state } = this.run;
    const known = new Set([...state.gates.values()].map((gate) => gate.toolCallId));
    for (const message of state.transcript)
      if (message.role === 'assistant') for (const call of message.toolCalls) known.add(call.id);
    const distinct = distinctCallIds(calls, known);
    return distinct.same ? calls : distinct.calls;
  }

  private repeatedFailure(calls: ToolCall[]) {
    for (const call of calls) {
      const result = this.run.state.transcript.find(
        (m): m is Extract<Message, { role: 'tool' }> => m.role === 'tool' && m.toolCallId === call.id,
      );
      if (!result || (result.status !== 'error' && result.status !== 'failed')) continue;
      const key = `${call.name}\n${JSON.stringify(call.args)}\n${result.content}`;
      const count = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, count);
      if (count >= MAX_IDENTICAL_ERRORS) return result;
    }
    return undefined;
  }

  /** A stopped turn: its open gates close as stopped (their prompts say so) and every call gets its result. */
  private closeStopped(by: string): void {
    const { run } = this;
    const stopped = run.gates.stopAll(by);
    if (stopped.some((gate) => gate.kind === 'credential'))
      wf.upsertSearchAttributes([{ key: AgentCredentialWaits, value: [] }]);
    for (const call of unresolvedToolCalls(run.state.transcript)) {
      // A call waiting at a gate never ran; any other was running (or about to) and was stopped part-way.
      const gate = stopped.find((g) => g.toolCallId === call.id);
      const unrun = gate && resultWithoutRun(gate);
      if (unrun) run.state.appendToolResult(call, unrun.status, unrun.content);
      else
        run.state.appendToolResult(
          call,
          'cancelled',
          `cancelled: @${by} stopped the turn while this call ran; if it had started, it was stopped part-way.`,
        );
    }
  }

  private closeUnresolved(status: ToolResultStatus, content: string): void {
    const { state } = this.run;
    for (const call of unresolvedToolCalls(state.transcript)) state.appendToolResult(call, status, content);
    this.run.gates.cancelApprovals();
  }
}
