/**
 * The one owner of a conversation's gates for their whole life: it opens them; applies decisions, answers, drafts,
 * hand-overs, sign-ins and a mission run's reports to them; closes them with an outcome (superseded, stopped,
 * cancelled); records where each prompt was posted; and tells each decision once. Only it writes a gate (through
 * the pure transitions of gates.ts); the rest of the session reads them. The one way a step waits on them is
 * `waitAt` (gate-wait.ts), and what people read about them is common/gates/words.ts.
 *
 * Every change it makes is marked on the state (`touch`), which the gate publication (gate-publication.ts) watches
 * to keep the memo and `AgentDeciders` true.
 */
import * as wf from '@temporalio/workflow';
import { mayDecide, samePerson } from '../../common/gates/deciders';
import { describeOutcome, isBudgetGate } from '../../common/gates/words';
import { checkToolArgs, findTool } from '../../common/tools/definitions';
import {
  answerDraftSignal,
  answerSignal,
  decideSignal,
  type AnswerSubmission,
  type ApprovalGate,
  type Decided,
  type Decision,
  type Gate,
  type MissionEvent,
  type ReadAnswerDraft,
  type SignalOrigin,
  type UserMessage,
} from './contract';
import type { DecisionSurface } from '../../common/chat-ids';
import {
  cancelGate,
  connectGate,
  evaluateAnswer,
  evaluateDecision,
  expireGate,
  keepTypedReply,
  mergeDraft,
  mirrorRemoteGate,
  readTypedAnswers,
  resolveGate,
  stopGate,
  supersedeGate,
} from './gates';
import type { OutboundEvent } from './outbound';
import { failureMessage, sealForRun } from './session-activities';
import { payloadDigest } from '../../common/seal-digest';
import type { SessionState } from './state';
import { decisionRefused, gateOpened, gateSettled } from './gate-metrics';
import { auditSettled } from './gate-audit';

/** What the owner needs of the session run: its state, where events go, and whether it is handing over. */
export interface GateHost {
  readonly state: SessionState;
  /** The conversation's channel, as gate metrics label it (absent: unit tests' hosts). */
  readonly input?: { channel: string };
  readonly sessionId: string;
  readonly continuingAsNew: boolean;
  emit(event: OutboundEvent): void;
}

export class Gates {
  /**
   * Gates whose decision the run before told, for a turn carried across continue-as-new: this run does not tell them
   * again. Only what the previous run carried is skipped, so histories recorded before (whose carried turn has no
   * `told`) tell exactly what they told.
   */
  private readonly toldBefore: ReadonlySet<string>;
  /** Gates whose decision this run told: carried, with toldBefore, when the wait continues as new again. */
  private readonly toldNow = new Set<string>();

  constructor(
    private readonly host: GateHost,
    told: readonly string[] | undefined,
  ) {
    this.toldBefore = new Set(told);
  }

  private get state(): SessionState {
    return this.host.state;
  }

  get(id: string): Gate | undefined {
    return this.state.gates.get(id);
  }

  /** A gate opens: kept (published with the others) and shown. */
  open(gate: Gate): void {
    this.state.addGate(gate);
    this.state.touch();
    if (!gate.remote) gateOpened(gate, this.host.input?.channel ?? 'unknown');
    this.host.emit({ type: 'gate', gate, reason: 'opened' });
  }

  /** Of these gates, those whose decision was told here or by the run before: not told again after a hand-over. */
  told(gates: readonly Gate[]): string[] {
    return gates.filter((gate) => this.toldNow.has(gate.id) || this.toldBefore.has(gate.id)).map((g) => g.id);
  }

  /** A decision, once: to the chat and as a note in the conversation (a wait carried over does not repeat it). */
  tellDecided(gate: Gate): void {
    if (this.toldBefore.has(gate.id) || this.toldNow.has(gate.id)) return;
    this.toldNow.add(gate.id);
    if (!gate.remote) gateSettled(gate, this.host.input?.channel ?? 'unknown');
    auditSettled(gate, this.host.input?.channel ?? 'unknown');
    this.host.emit({ type: 'gate_resolved', gate, outcome: describeOutcome(gate) });
    this.state.notify(`${gate.toolName} ${describeOutcome(gate)}.`, undefined, gate.id);
  }

  /** A prompt was posted (a chat message that shows the gate): kept, so later edits reach every copy. */
  recordPost(gateId: string, ref: NonNullable<Gate['posts']>[number]): void {
    const gate = this.get(gateId);
    if (gate) gate.posts = [...(gate.posts ?? []), ref];
  }

  /** A person's reply typed in the chat that decides or answers a gate, kept to show with it. */
  keepTyped(gate: Gate, message: Pick<UserMessage, 'userId' | 'text'>): void {
    keepTypedReply(gate, message, Date.now());
  }

  // ---- decisions, answers, drafts ----

  decide(decided: Decided<Decision>): void {
    const { via, ...decision } = decided;
    const gate = this.get(decision.gateId);
    if (gate?.remote) return this.forward(gate.remote.workflowId, 'decide', decision, decision.userId, via);
    const now = Date.now();
    this.expireIfPastDeadline(gate, now);
    const tool = gate ? findTool(gate.toolName) : undefined;
    const check = evaluateDecision({
      gate,
      decision: decided,
      now,
      checkArgs: (args) => (tool ? checkToolArgs(tool, args) : { ok: false, error: 'unknown tool' }),
      newGrantId: () => wf.uuid4(),
      sessionId: this.host.sessionId,
    });
    if (!check.ok) {
      decisionRefused('rule', 'decide');
      return this.state.notify(check.notice, decision.userId, undefined, decision.gateId);
    }
    if (gate?.kind === 'approval') gate.approvals = check.approvals;
    if (!check.resolution && check.delegateTo) {
      // Handed over: recorded on the gate, told to everyone, and the prompt asked again with the new decider in it.
      gate!.approvers = [...gate!.approvers, check.delegateTo];
      gate!.delegations = [
        ...(gate!.delegations ?? []),
        { by: decision.userId, to: check.delegateTo, at: now },
      ];
      this.state.notify(check.notice);
      this.host.emit({ type: 'gate', gate: gate!, reason: 'repost' });
      this.state.touch();
      return;
    }
    if (!check.resolution) {
      // One more approval of a call that needs several: the approver is told, every prompt shows the count.
      this.state.notify(check.notice, decision.userId, undefined, decision.gateId);
      this.host.emit({ type: 'gate_updated', gate: gate! });
      return;
    }
    resolveGate(gate!, check.resolution);
    this.state.touch();
  }

  answer(answered: Decided<AnswerSubmission>): void {
    const { via, ...submission } = answered;
    const gate = this.get(submission.gateId);
    if (gate?.remote)
      return this.forward(gate.remote.workflowId, 'answer', submission, submission.userId, via);
    const now = Date.now();
    this.expireIfPastDeadline(gate, now);
    const check = evaluateAnswer(gate, answered, now);
    if (!check.ok) {
      decisionRefused('rule', 'answer');
      return this.state.notify(check.notice, submission.userId, undefined, submission.gateId);
    }
    resolveGate(gate!, check.resolution);
    this.state.touch();
  }

  /** A question's answers in parts (Discord's select menus, typed parts): kept per person until complete or sent. */
  draft(draft: ReadAnswerDraft): void {
    const { gateId, userId, answers, texts, picks, submit } = draft;
    const gate = this.get(gateId);
    if (gate?.remote) return this.forward(gate.remote.workflowId, 'answerDraft', draft, userId);
    if (gate?.kind !== 'question' || gate.status !== 'pending' || !mayDecide(gate, userId))
      return this.answer({ gateId, userId, answers }); // refused with the usual explanation
    const unknown = answers.find((a) => !gate.questions.some((q) => q.label === a.question));
    if (unknown)
      return this.state.notify(
        `There is no question “${unknown.question}”. The question is still open.`,
        userId,
      );
    const typed = readTypedAnswers(gate.questions, texts);
    if (!typed.ok) return this.state.notify(`${typed.error} The question is still open.`, userId);
    const picked = picks.flatMap(({ index, selected }) => {
      const question = gate.questions[index];
      return question ? [{ question: question.label, selected }] : [];
    });
    const merged = mergeDraft(gate.questions, gate.drafts?.[userId] ?? [], [
      ...answers,
      ...picked,
      ...typed.answers,
    ]);
    gate.drafts = { ...gate.drafts, [userId]: merged };
    this.state.touch();
    const complete = gate.questions.every((q) => merged.some((a) => a.question === q.label));
    if (complete || submit) this.answer({ gateId, userId, answers: merged });
  }

  /** A sign-in finished: the person's own waits on that provider connect (nobody else's). */
  connect(provider: string, userId: string): void {
    for (const gate of this.state.pendingGates()) {
      if (gate.kind !== 'credential' || gate.provider !== provider) continue;
      // Only the person whose credential it is (a shared mission's run acts as its owner, whoever else signs in).
      if (gate.requesterId !== userId) continue;
      connectGate(gate, userId, Date.now());
      this.state.touch();
    }
  }

  /** A mission run's gate reported here: shown as a proxy gate (decided there), reminded, or closed as it was. */
  mirror(event: MissionEvent & { gate: Gate; runWorkflowId: string }): void {
    const existing = this.get(event.gate.id);
    if (!event.resolved) {
      // The run's reminder: the prompt posted here again while its gate stays open.
      if (existing?.remote && existing.status === 'pending' && event.reminder)
        return this.host.emit({ type: 'gate', gate: existing, reason: 'reminder' });
      if (existing) return;
      const proxy: Gate = {
        ...event.gate,
        posts: [],
        toolCallId: `${event.runWorkflowId}:${event.gate.toolCallId}`,
        remote: { workflowId: event.runWorkflowId, missionName: event.missionName },
      };
      return this.open(proxy);
    }
    if (!existing?.remote || existing.status !== 'pending') return;
    mirrorRemoteGate(existing, event.gate);
    this.state.touch();
    this.host.emit({
      type: 'gate_resolved',
      gate: existing,
      outcome: event.outcome ?? describeOutcome(existing),
    });
  }

  // ---- closing ----

  /** A new message from a person ends the gates they asked for (a mission run's gate here belongs to the run). */
  supersedeBy(userId: string): boolean {
    let any = false;
    for (const gate of this.state.pendingGates().filter((g) => samePerson(g, g.requesterId, userId))) {
      if (gate.remote) continue;
      supersedeGate(gate, userId, Date.now());
      any = true;
    }
    return any;
  }

  /** A stopped turn: its open gates close as stopped, and their prompts say so. Returns those it closed. */
  stopAll(by: string): Gate[] {
    const now = Date.now();
    const stopped: Gate[] = [];
    for (const gate of this.state.pendingGates()) {
      if (gate.remote || !stopGate(gate, by, now)) continue; // a mission run's gate belongs to the run
      stopped.push(gate);
      auditSettled(gate, this.host.input?.channel ?? 'unknown');
      this.host.emit({ type: 'gate_resolved', gate, outcome: describeOutcome(gate) });
    }
    this.state.touch();
    return stopped;
  }

  /** A cancelled turn: its open approvals close as cancelled. */
  cancelApprovals(): void {
    for (const gate of this.state.pendingApprovals())
      if (cancelGate(gate, Date.now())) auditSettled(gate, this.host.input?.channel ?? 'unknown');
  }

  /** This conversation's own open budget gates (a mission run's, shown here, belong to the run). */
  openBudgetGates(): ApprovalGate[] {
    return this.state.pendingApprovals().filter((gate) => isBudgetGate(gate) && !gate.remote);
  }

  /** Budget gates whose question no longer stands close as cancelled, told (all but `except`). */
  cancelBudgetGates(except?: ApprovalGate): void {
    for (const gate of this.openBudgetGates()) {
      if (gate === except || !cancelGate(gate, Date.now())) continue;
      auditSettled(gate, this.host.input?.channel ?? 'unknown');
      this.host.emit({ type: 'gate_resolved', gate, outcome: describeOutcome(gate) });
      this.state.touch();
    }
  }

  /**
   * A decision or answer that arrives past the gate's deadline while the run hands over (no wait's timer runs
   * then) finds the gate expired, as the deadline promised, and is refused like any late one. Only then: while a
   * wait runs, its timer expires the gate, and a click made in time but delivered late (every worker was down)
   * still counts, since signals are applied before the timer that fires in the same workflow task.
   */
  private expireIfPastDeadline(gate: Gate | undefined, now: number): void {
    if (!this.host.continuingAsNew) return;
    if (gate?.status !== 'pending' || gate.expiresAt === null || now < gate.expiresAt) return;
    expireGate(gate, now);
    this.state.touch();
  }

  /** Decisions on their way to a mission run (being sealed, then signalled): the run hands over only after them. */
  forwarding = 0;

  /**
   * Signals a mission run's own gate (decided there); a run that has ended is told to the person. What this run
   * checked (a gateway's seal, or a typed reply in a sealed message) is sealed afresh for that run, which believes
   * only sealed signals; an operator's decision keeps agentctl's signature, which the run checks itself.
   */
  private forward(
    workflowId: string,
    signal: 'decide' | 'answer' | 'answerDraft',
    payload: Decision | AnswerSubmission | ReadAnswerDraft,
    userId?: string,
    via?: DecisionSurface,
  ): void {
    this.forwarding++;
    const send = async () => {
      const { originMac, ...seal } = await sealForRun({
        signal,
        to: workflowId,
        digest: payloadDigest(payload),
        ...(via ? { via } : {}),
      });
      const handle = wf.getExternalWorkflowHandle(workflowId);
      // Where it was decided goes along, bound to the new seal (as the third argument, only when told).
      const origin: [SignalOrigin] | [] = via && originMac ? [{ via, mac: originMac }] : [];
      if (signal === 'decide') await handle.signal(decideSignal, payload as Decision, seal, ...origin);
      else if (signal === 'answer')
        await handle.signal(answerSignal, payload as AnswerSubmission, seal, ...origin);
      else await handle.signal(answerDraftSignal, payload as ReadAnswerDraft, seal);
    };
    void send()
      .catch((error: unknown) =>
        this.state.notify(
          error instanceof wf.ActivityFailure
            ? `That could not be passed on to the mission run (${failureMessage(error)}); nothing changed.`
            : 'That mission run has already ended; nothing changed.',
          userId,
        ),
      )
      .finally(() => this.forwarding--);
  }
}
