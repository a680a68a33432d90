/**
 * One run of a session workflow: its state, settings, outbox and MCP tools, and what each signal does to
 * them. The workflow's handlers call these methods in one line; the turn loop (turn.ts) works on the same run.
 */
import { auditsInFlight, grantRevoked, recordInTrail } from '../audit-trail';
import * as wf from '@temporalio/workflow';
import {
  AgentChannel,
  AgentCostUsd,
  AgentDeciders,
  AgentFeedback,
  AgentOwner,
  AgentStatus,
  AgentTokens,
  type SessionStatus,
} from '../../common/search-attributes';
import { TranscriptChunks } from './transcript-chunks';
import { parseTextAnswer, parseTextAnswers } from '../../common/tools/ask-user';
import { typedAnswerHint } from '../../common/gates/words';
import {
  answerDraftSchema,
  answerSubmissionSchema,
  credentialProvidedSchema,
  decisionSchema,
  feedbackSchema,
  gatewaySealSchema,
  repostPendingSchema,
  revokeGrantSchema,
  stopSchema,
  tryModelNowSchema,
  a2aPushSchema,
  archiveSchema,
  userMessageSchema,
  type AnswerSubmission,
  type CarriedTurn,
  type MissionEvent,
  type SessionInput,
  type UserMessage,
} from './contract';
import { Gates } from './gate-owner';
import { publishOpenGates } from './gate-publication';
import { parseTypedDecision } from './gates';
import { mayDecide } from '../../common/gates/deciders';
import { DayLedger } from './day-ledger';
import { McpTools } from './mcp-tools';
import type { OutboundEvent } from './outbound';
import { Outbox } from './outbox';
import { A2aPushes } from './a2a-push';
import { GateMail } from './gate-mail';
import { failureMessage, loadSettings, verifyGatewaySeals, verifyOperatorAction } from './session-activities';
import { payloadDigest } from '../../common/seal-digest';
import { SealCheck } from './seal-check';
import { continueOnCurrentVersion, upgradeRequested } from '../upgrade';
import type { PlayableTurn, Session } from './session';
import type { SessionSettings } from './settings';
import { SessionState } from './state';

/** The session workflow's signature, for continue-as-new (the workflow itself imports this file). */
type SessionWorkflow = (input: SessionInput) => Promise<void>;

const SIGNALS_BEFORE_CONTINUE = 5_000;
/** An operator signature's lifetime (infra/operator-claim.ts CLAIM_TTL_MS); the workflow may not import infra. */
const OPERATOR_CLAIM_TTL_MS = 10 * 60_000;
/** How long settings read for one turn serve the next ones (ms of workflow time). */
const SETTINGS_FRESH_MS = 60_000;

/** "stop", "Stop!", "/stop": a person asking to stop the running turn. */
function isStopCommand(text: string): boolean {
  return /^\/?stop[.!]?$/i.test(text.trim());
}
/** History events after which a session continues as new between turns (policy `continueAsNewAfterEvents`). */
const EVENTS_BEFORE_CONTINUE = 10_000;

export class SessionRun implements Session {
  readonly sessionId = wf.workflowInfo().workflowId;
  readonly state: SessionState;
  readonly outbox: Outbox;
  readonly mcp: McpTools;
  /** A2A tasks of this conversation whose changes are pushed to their clients. */
  readonly pushes: A2aPushes;
  /** Gates e-mailed to their deciders (SMTP configured). */
  readonly mail: GateMail;
  /** Which messages the worker's transcript store holds: model calls name those by digest. */
  readonly transcriptChunks = new TranscriptChunks();
  /** Set when this is a mission run: its one turn is the goal, its result goes back to the mission. */
  readonly runOf: SessionInput['run'];
  /** Slack and Discord are told through the outbox; the web chat reads state. */
  readonly emitsToPlatform: boolean;
  settings: SessionSettings = { maxSteps: 12 };
  /** What `setStatus` last wrote to search attributes and memo in this run, and whether it skips a repeat. */
  private lastWritten:
    { attributes: Map<string, unknown>; waitingFor: string | null; models: string } | undefined;
  /** When this run last read the settings (workflow time). */
  private settingsReadAt: number | undefined;
  /** Why a mission run did not reach its goal (the model failed, or the step limit). */
  private runFailure: string | undefined;
  private handingOver = false;
  /** The one owner of this conversation's gates (gate-owner.ts): every change to a gate goes through it. */
  readonly gates: Gates;
  /** Each person's spend today, once read from their ledger (budget.ts). */
  readonly ledger = new DayLedger();
  /** The turn running now, if any: Stop cancels it (turn.ts). */
  private turn: PlayableTurn | undefined;
  private signalsThisRun = 0;
  /** History size that triggers continue-as-new between turns; configurable so long sessions can be tested. */
  private continueAfterEvents = EVENTS_BEFORE_CONTINUE;
  /** Operator signatures already believed, by MAC, with when they were made: each is believed once. */
  private readonly usedClaims = new Map<string, number>();
  /** Signals in a person's name wait here for their gateway seal to be checked (seal-check.ts). */
  private readonly sealCheck = new SealCheck((text, userId) => this.state.notify(text, userId));

  /** How many signals in a person's name still wait for their seal's check (a click's outcome is not known yet). */
  get signalsBeingChecked(): number {
    return this.sealCheck.waiting();
  }
  /** Messages refused while the inbox was full, per sender since their last accepted one. */
  private readonly refusedWhileFull = new Map<string, number>();

  constructor(readonly input: SessionInput) {
    this.state = new SessionState(
      input,
      () => Date.now(),
      () => wf.uuid4(),
    );
    this.runOf = input.run;
    this.gates = new Gates(this, input.carried?.turn?.told);
    // Seals and operator signatures believed before a hand-over stay used: one copied from an earlier run's history
    // and sent after a (forced) continue-as-new is still refused.
    this.sealCheck.remember(input.carried?.usedSeals);
    for (const [mac, issuedAt] of input.carried?.usedClaims ?? []) this.usedClaims.set(mac, issuedAt);
    this.state.arriving = () => this.sealCheck.waiting('userMessage');
    this.emitsToPlatform =
      input.channel === 'slack' || input.channel === 'discord' || input.channel === 'teams';
    this.outbox = new Outbox(this.sessionId, this.runOf, (gateId, ref) => this.gates.recordPost(gateId, ref));
    this.mcp = new McpTools(this.state);
    this.pushes = new A2aPushes(this.sessionId, this.state, input.carried?.a2aPush);
    this.mail = new GateMail(
      this.sessionId,
      input.channel,
      this.state,
      () => this.settings,
      input.carried?.mailedGates,
    );
    if (this.emitsToPlatform) {
      this.state.listener = {
        assistantText: (text, id, answer, streamRef) =>
          this.emit({
            type: 'message',
            text,
            id,
            ...(answer ? { answer: true } : {}),
            ...(streamRef ? { replaces: streamRef } : {}),
          }),
        notice: (notice) =>
          this.emit({ type: 'notice', text: notice.text, ...(notice.to ? { to: notice.to } : {}) }),
      };
    } else if (this.runOf) {
      // A run's gates are decided from its owner's conversation, so a refused click is told there.
      this.state.listener = {
        assistantText: () => {},
        notice: (notice) => {
          if (notice.to) this.emit({ type: 'notice', text: notice.text, to: notice.to });
        },
      };
    }
    if (this.emitsToPlatform || this.runOf) void this.outbox.keepDelivering();
    // Not cancellable: a cancelled run's gates close as cancelled, and that is published too.
    void wf.CancellationScope.nonCancellable(() =>
      publishOpenGates({
        state: this.state,
        settings: () => this.settings,
        mayWriteDeciders: () => this.hasAttribute(AgentDeciders.name),
        ...(this.runOf ? { missionName: this.runOf.missionName } : {}),
      }),
    ).catch((error: unknown) =>
      // A failed write is told, not left as an unhandled rejection that would fail every workflow task of this run.
      wf.log.error('publishing the open gates stopped', { error: failureMessage(error) }),
    );
  }

  setStatus(status: SessionStatus, waitingFor?: string): void {
    this.state.status = status;
    const { usage } = this.state;
    const attributes = [
      { key: AgentStatus, value: status },
      { key: AgentChannel, value: this.input.channel },
      { key: AgentOwner, value: this.input.ownerId },
      // Operators find costly conversations in the Temporal UI: `AgentCostUsd > 1`.
      ...(usage.calls && this.hasAttribute(AgentTokens.name) && this.hasAttribute(AgentCostUsd.name)
        ? [
            { key: AgentTokens, value: usage.tokens },
            { key: AgentCostUsd, value: Math.round(usage.costUsd * 1e6) / 1e6 },
          ]
        : []),
    ] as const;
    const waiting = waitingFor ?? null;
    // Each upsert is a write to the server's visibility store: what this run already wrote is not written again,
    // neither a search attribute with the same value nor the same waiting line.
    const last = this.lastWritten;
    const changed = last
      ? attributes.filter(({ key, value }) => last.attributes.get(key.name) !== value)
      : attributes;
    if (changed.length) wf.upsertSearchAttributes([...changed]);
    // Which models answered here (MODEL_FALLBACKS, a fork's model), for the Temporal UI: written when one is added.
    const models = Object.keys(this.state.usageByModel).sort();
    const newModels = models.join(',') !== (last?.models ?? '');
    if (!last || waiting !== last.waitingFor || newModels)
      wf.upsertMemo({ waitingFor: waiting, ...(models.length ? { models } : {}) });
    this.lastWritten = {
      attributes: new Map(attributes.map(({ key, value }) => [key.name, value])),
      waitingFor: waiting,
      models: models.join(','),
    };
    this.state.touch();
  }

  /** A mission run did not reach its goal: the mission is told why. */
  fail(reason: string): void {
    this.runFailure = reason;
  }

  get failure(): string | undefined {
    return this.runFailure;
  }

  /** Set from the moment this run hands over to the next (continue-as-new), mid-wait or between turns. */
  get continuingAsNew(): boolean {
    return this.handingOver;
  }

  /** Plays one turn; while it plays, Stop cancels it. (No async layer of its own: see Turn.play.) */
  play(turn: PlayableTurn, after?: () => void): Promise<void> {
    this.turn = turn;
    return turn.play(() => {
      if (this.turn === turn) this.turn = undefined;
      after?.();
    });
  }

  /** Continues as new in the middle of a wait, carrying the open gates and this turn; the next run resumes it. */
  async handOverMidWait(turn: CarriedTurn): Promise<never> {
    this.handingOver = true;
    await wf.condition(() => this.readyToHandOver());
    const carried = this.carry();
    // Only the carried gates: the list stays as small as what it refers to.
    const told = this.gates.told(carried.gates);
    return await continueOnCurrentVersion<SessionWorkflow>({
      ...this.input,
      carried: { ...carried, turn: { ...turn, ...(told.length ? { told } : {}) } },
    });
  }

  /** Between turns: the next run starts from this one's state (no gate of a turn is open to expire meanwhile). */
  async handOver(): Promise<never> {
    await wf.condition(() => this.readyToHandOver());
    return await continueOnCurrentVersion<SessionWorkflow>({ ...this.input, carried: this.carry() });
  }

  /** Chat platforms get everything; a mission run reports only its gates and its refused clicks. */
  emit(event: OutboundEvent): void {
    if (this.emitsToPlatform) this.outbox.push(event);
    else if (
      this.runOf &&
      ((event.type === 'gate' && event.reason !== 'repost') ||
        event.type === 'gate_resolved' ||
        (event.type === 'notice' && event.to))
    )
      this.outbox.push(event);
  }

  // ---- Signals ----

  onRepostPending(raw: unknown): void {
    this.signalsThisRun++;
    const parsed = repostPendingSchema.safeParse(raw);
    if (!parsed.success) return;
    const open = this.state.pendingGates();
    if (!open.length)
      return this.state.notify('Nothing is waiting for a decision in this conversation.', parsed.data.userId);
    for (const gate of open) this.emit({ type: 'gate', gate, reason: 'repost' });
  }

  async onDecide(raw: { userId?: string } | undefined, seal?: unknown, origin?: unknown): Promise<void> {
    this.signalsThisRun++;
    const parsed = decisionSchema.safeParse(raw);
    if (!parsed.success)
      return this.state.notify(
        `That decision was malformed and was ignored: ${parsed.error.message}`,
        raw?.userId,
      );
    const decision = parsed.data;
    // An operator's decision carries agentctl's signature instead of a gateway's seal. A mission run's gate
    // decides there (passed on sealed), and checks the operator's signature there.
    if (decision.operator) {
      if (this.gates.get(decision.gateId)?.remote) return this.gates.decide(decision);
      return await this.asOperator(
        { kind: 'decide', target: decision.gateId, choice: decision.choice, operator: decision.userId },
        decision.claim,
        () => this.gates.decide(decision),
      );
    }
    await this.sealCheck.admit({
      signal: 'decide',
      payload: raw,
      seal,
      userId: decision.userId,
      what: 'A decision',
      origin,
      apply: (via) => this.gates.decide({ ...decision, ...(via ? { via } : {}) }),
    });
  }

  /**
   * `operator: true` skips the decider check, so it is believed only with agentctl's signature, which the worker
   * checks with the operator key: anyone who reaches Temporal's frontend can send the flag, not the signature.
   */
  private async asOperator(
    action: { kind: 'decide' | 'stop'; target: string; choice?: string; operator: string },
    claim: { issuedAt: number; mac: string } | undefined,
    apply: () => void,
  ): Promise<void> {
    let verdict: { ok: true } | { ok: false; reason: string };
    // Single use: a signed action seen before is not believed again (a signal copied from history and re-sent).
    this.forgetExpiredClaims();
    if (claim && this.usedClaims.has(claim.mac))
      verdict = { ok: false, reason: 'its operator signature was already used once' };
    else
      try {
        verdict = await verifyOperatorAction({ action, claim });
      } catch (error) {
        verdict = { ok: false, reason: `the signature could not be checked (${failureMessage(error)})` };
      }
    if (verdict.ok) {
      if (claim) this.usedClaims.set(claim.mac, claim.issuedAt);
      return apply();
    }
    wf.log.warn('operator action refused', { ...action, reason: verdict.reason });
    this.state.notify(
      `An operator action as "${action.operator}" was refused: ${verdict.reason}. Nothing changed.`,
    );
  }

  /** A claim older than its lifetime is refused by the check anyway: it need not be remembered. */
  private forgetExpiredClaims(): void {
    for (const [mac, issuedAt] of this.usedClaims)
      if (Date.now() - issuedAt > OPERATOR_CLAIM_TTL_MS * 2) this.usedClaims.delete(mac);
  }

  async onAnswer(raw: { userId?: string } | undefined, seal?: unknown, origin?: unknown): Promise<void> {
    this.signalsThisRun++;
    const parsed = answerSubmissionSchema.safeParse(raw);
    if (!parsed.success)
      return this.state.notify(
        `Those answers were malformed and were ignored: ${parsed.error.message}`,
        raw?.userId,
      );
    const submission = parsed.data;
    await this.sealCheck.admit({
      signal: 'answer',
      payload: raw,
      seal,
      userId: submission.userId,
      what: 'An answer',
      origin,
      apply: (via) => this.gates.answer({ ...submission, ...(via ? { via } : {}) }),
    });
  }

  async onAnswerDraft(raw: { userId?: string } | undefined, seal?: unknown): Promise<void> {
    this.signalsThisRun++;
    const parsed = answerDraftSchema.safeParse(raw);
    if (!parsed.success)
      return this.state.notify(
        `That answer was malformed and was ignored: ${parsed.error.message}`,
        raw?.userId,
      );
    const draft = parsed.data;
    await this.sealCheck.admit({
      signal: 'answerDraft',
      payload: raw,
      seal,
      userId: draft.userId,
      what: 'An answer',
      apply: () => this.gates.draft(draft),
    });
  }

  /** A mission reporting here: its results, and its runs' gates (shown here, decided there). */
  onMissionEvent(event: MissionEvent): void {
    this.signalsThisRun++;
    const state = this.state;
    if (event.text) state.appendAssistantNote(event.text.slice(0, 20_000));
    if (event.notice)
      state.notify(`${event.missionName}: ${event.notice.text}`.slice(0, 2_000), event.notice.to);
    if (event.gate && event.runWorkflowId)
      this.gates.mirror({ ...event, gate: event.gate, runWorkflowId: event.runWorkflowId });
  }

  /** A sign-in finished (the gateway's OAuth callback or key form): resumes this person's waits on that provider. */
  onCredentialProvided(raw: unknown): void {
    this.signalsThisRun++;
    const parsed = credentialProvidedSchema.safeParse(raw);
    if (!parsed.success) return;
    this.gates.connect(parsed.data.provider, parsed.data.userId);
  }

  /**
   * Applied whatever the seal says (taking a grant away is never a risk, and a revocation must not be lost); the
   * gateway's seal says whether the audit may name the person as the one who revoked it.
   */
  async onRevokeGrant(raw: unknown, seal?: unknown): Promise<void> {
    this.signalsThisRun++;
    const parsed = revokeGrantSchema.safeParse(raw);
    if (!parsed.success) return;
    const { grantId, userId } = parsed.data;
    const revoked = this.state.revokeGrant(grantId, userId);
    this.state.notify(revoked ? 'Grant revoked.' : 'No such grant of yours in this conversation.', userId);
    if (!revoked) return;
    const sealed = gatewaySealSchema.safeParse(seal);
    const [verdict] = sealed.success
      ? await verifyGatewaySeals({
          items: [{ signal: 'revokeGrant', digest: payloadDigest(raw), seal: sealed.data }],
        }).catch(() => [undefined])
      : [undefined];
    recordInTrail(grantRevoked(revoked, this.input.channel, verdict?.ok === true));
  }

  onArchive(raw: unknown): void {
    this.signalsThisRun++;
    const parsed = archiveSchema.safeParse(raw);
    if (!parsed.success) return;
    const { userId, archived } = parsed.data;
    if (userId !== this.input.ownerId)
      return this.state.notify('Only the person who started this conversation may archive it.', userId);
    // A memo, so the list (visibility) shows it with no worker asked; continue-as-new keeps it.
    wf.upsertMemo({ archived: archived ? true : undefined });
  }

  async onStop(raw: unknown): Promise<void> {
    this.signalsThisRun++;
    const parsed = stopSchema.safeParse(raw);
    if (!parsed.success) return;
    const { userId, operator, claim } = parsed.data;
    if (!this.turn) {
      // agentctl says so itself; a person is told here.
      if (!operator) this.state.notify('Nothing is running, so there is nothing to stop.', userId);
      return;
    }
    if (!operator) return this.stop(userId);
    const target = wf.workflowInfo().workflowId;
    await this.asOperator({ kind: 'stop', target, operator: userId }, claim, () => {
      if (this.turn) this.stop(`operator:${userId}`, true);
    });
  }

  /** "Try the fallback now" during a provider's wait (model-step.ts), for the turn's requester or an approver. */
  /** An A2A client set a push config on one of this conversation's tasks (the vault holds it). */
  onA2aPush(raw: unknown): void {
    this.signalsThisRun++;
    const parsed = a2aPushSchema.safeParse(raw);
    if (parsed.success && !this.runOf && !this.emitsToPlatform) this.pushes.follow(parsed.data.taskId);
  }

  onTryModelNow(raw: unknown): void {
    this.signalsThisRun++;
    const parsed = tryModelNowSchema.safeParse(raw);
    if (!parsed.success) return;
    const { userId } = parsed.data;
    const wait = this.state.modelWait;
    if (!wait) return this.state.notify('Nothing waits for the model now.', userId);
    if (userId !== wait.requesterId && !(this.settings.approvers ?? []).includes(userId))
      return this.state.notify(
        `Only @${wait.requesterId}, who asked, or an approver can choose not to wait for the model.`,
        userId,
      );
    wait.tryNowBy ??= userId;
  }

  /** Stops the running turn, for its requester, an approver or an operator; anyone else is told who may. */
  private stop(userId: string, operator = false): void {
    const turn = this.turn!;
    if (turn.stoppedBy) return;
    if (!operator && userId !== turn.requesterId && !(this.settings.approvers ?? []).includes(userId))
      return this.state.notify(
        `Only @${turn.requesterId}, who asked, or an approver can stop this turn.`,
        userId,
      );
    turn.stop(userId);
  }

  /** A newer search attribute the worker found registered (settings), so setting it cannot fail the task. */
  private hasAttribute(name: string): boolean {
    return this.settings.optionalSearchAttributes?.includes(name) ?? false;
  }

  /** A rating of an answer: kept on the message (one per person) and added to AgentFeedback. */
  onFeedback(raw: unknown): void {
    this.signalsThisRun++;
    const parsed = feedbackSchema.safeParse(raw);
    if (!parsed.success) return;
    const { messageId, userId, rating } = parsed.data;
    const message = this.state.transcript.find((m) => m.role === 'assistant' && m.id === messageId);
    if (message?.role !== 'assistant')
      return this.state.notify(
        'That answer is no longer in this conversation; nothing was recorded.',
        userId,
      );
    message.feedback = [
      ...(message.feedback ?? []).filter((f) => f.by !== userId),
      { by: userId, rating, at: Date.now() },
    ];
    this.state.touch();
    // Added to what the attribute holds (ratings of messages no longer carried stay), set only on a change.
    const current = wf.workflowInfo().typedSearchAttributes.get(AgentFeedback) ?? [];
    if (current.includes(rating) || !this.hasAttribute(AgentFeedback.name)) return;
    wf.upsertSearchAttributes([{ key: AgentFeedback, value: [...current, rating].sort() }]);
  }

  async onUserMessage(raw: unknown, seal?: unknown): Promise<void> {
    this.signalsThisRun++;
    const parsed = userMessageSchema.safeParse(raw);
    if (!parsed.success) return;
    const message = parsed.data;
    await this.sealCheck.admit({
      signal: 'userMessage',
      payload: raw,
      seal,
      userId: message.userId,
      what: 'A message',
      apply: () => this.receive(message),
    });
  }

  /** A message whose seal was checked: an answer, a decision, a stop, or the next turn's request. */
  private receive(message: UserMessage): void {
    const state = this.state;
    if (state.seen(message.messageId)) return; // a gateway retried the same message
    // `stop` typed while a turn runs stops it (while idle it is an ordinary message to the model).
    if (this.turn && isStopCommand(message.text)) return this.stop(message.userId);
    const textAnswer = this.answerFromText(message);
    if (textAnswer === 'refused') return;
    if (textAnswer) return this.gates.answer(textAnswer);
    const open = state.pendingApprovals();
    const typed = parseTypedDecision(message.text);
    if (typed && open.length === 1) {
      // Only a reply that may decide is kept to show: others' "approve" is refused, and must not look like a vote.
      if (mayDecide(open[0]!, message.userId)) this.gates.keepTyped(open[0]!, message);
      return this.gates.decide({
        gateId: open[0]!.id,
        choice: typed.choice,
        userId: message.userId,
        ...(typed.reason ? { reason: typed.reason } : {}),
      });
    }
    if (typed && open.length > 1) {
      const list = open.map((g) => `${g.toolName} (${g.subject.slice(0, 60)})`).join('; ');
      return state.notify(
        `${open.length} approvals are open: ${list}. Which one? Use the buttons on the one you mean.`,
        message.userId,
      );
    }
    // A mission run's gate shown here is decided only by the run: a new message here does not end it.
    if (this.gates.supersedeBy(message.userId)) state.supersededTurn = true;
    const full = state.inboxFull(message);
    if (full) {
      // Told at the first refusal and every tenth after it: a flood is not answered with a flood of notices.
      const refused = (this.refusedWhileFull.get(message.userId) ?? 0) + 1;
      this.refusedWhileFull.set(message.userId, refused);
      if (refused % 10 === 1)
        state.notify(
          `Your message was not queued${refused > 1 ? ` (nor ${refused - 1} before it)` : ''}: ${full}. Send it again once I have answered the ones before it.`,
          message.userId,
        );
      return;
    }
    this.refusedWhileFull.delete(message.userId);
    state.enqueue(message);
  }

  // ---- Decisions and answers ----

  /**
   * The text fallback: a reply like "2" or "other: ..." to the asker's only open single question answers
   * it; "1: 2; 2: 1,3" answers several questions, and a reply in that form that does not fit is refused
   * with what is missing or invalid, the question staying open.
   */
  private answerFromText(message: UserMessage): AnswerSubmission | 'refused' | undefined {
    const questions = this.state.pendingQuestions().filter((g) => mayDecide(g, message.userId));
    if (questions.length !== 1) return undefined;
    const gate = questions[0]!;
    if (gate.questions.length === 1) {
      const answer = parseTextAnswer(gate.questions[0]!, message.text);
      if (answer) this.gates.keepTyped(gate, message);
      return answer ? { gateId: gate.id, userId: message.userId, answers: [answer] } : undefined;
    }
    const typed = parseTextAnswers(gate.questions, message.text);
    if (!typed) return undefined;
    this.gates.keepTyped(gate, message);
    if (typed.ok) return { gateId: gate.id, userId: message.userId, answers: typed.answers };
    this.state.notify(
      `Your answers were not taken: ${typed.error}. ${typedAnswerHint(gate.questions)}. The question is still open.`,
      message.userId,
    );
    return 'refused';
  }

  // ---- Settings and continue-as-new ----

  /**
   * Reads the worker's settings for a turn, unless this run read them less than SETTINGS_FRESH_MS ago: a quick
   * back-and-forth then skips an activity and a workflow task per message, and a changed policy file reaches a
   * running conversation within a minute.
   */
  async refreshSettings(): Promise<void> {
    const fresh = this.settingsReadAt !== undefined && Date.now() - this.settingsReadAt < SETTINGS_FRESH_MS;
    if (fresh) return;
    try {
      this.useSettings(await loadSettings());
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
      wf.log.error('loading settings failed', { sessionId: this.sessionId, error: failureMessage(error) });
      this.state.appendAssistantNote(
        `⚠️ I could not load my settings (${failureMessage(error)}), so this turn goes on with the ones I had.`,
      );
    }
  }

  /** Settings just read (by the turn, or with the run's opening): the turns of the next minute use them. */
  useSettings(settings: SessionSettings): void {
    this.settings = settings;
    this.settingsReadAt = Date.now();
    this.continueAfterEvents = settings.continueAsNewAfterEvents ?? EVENTS_BEFORE_CONTINUE;
  }

  /** Between turns: the history is long, or a deploy asked this run to move to the current version. */
  shouldContinueAsNew(): boolean {
    const info = wf.workflowInfo();
    return (
      upgradeRequested() ||
      info.continueAsNewSuggested ||
      info.historyLength > this.continueAfterEvents ||
      this.signalsThisRun > SIGNALS_BEFORE_CONTINUE
    );
  }

  /** The state the next run starts from; the transcript is bounded so the carried payload stays under 2 MB. */
  carry() {
    return {
      ...this.state.carry({ boundTranscript: { previousRunId: wf.workflowInfo().runId } }),
      ...this.pushes.carry(),
      ...this.mail.carry(),
      ...nonEmpty('usedSeals', this.sealCheck.carry()),
      ...nonEmpty('usedClaims', this.liveClaims()),
    };
  }

  /** Operator signatures believed that have not expired (the next run still refuses them). */
  private liveClaims(): [string, number][] {
    this.forgetExpiredClaims();
    return [...this.usedClaims.entries()];
  }

  /** Nothing left to hand over: every handler finished and the outbox delivered. */
  readyToHandOver(): boolean {
    return (
      wf.allHandlersFinished() &&
      this.outbox.drained &&
      !this.gates.forwarding &&
      // A push in flight is not waited for: the next run pushes again from what was carried.
      this.mail.idle &&
      auditsInFlight() === 0
    );
  }
}

/** `{ [key]: list }` when the list has entries: a carried state without them is as before. */
function nonEmpty<K extends string>(key: K, list: [string, number][]): { [P in K]?: [string, number][] } {
  return (list.length ? { [key]: list } : {}) as { [P in K]?: [string, number][] };
}
