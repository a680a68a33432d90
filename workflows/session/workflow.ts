/**
 * The session workflow: one per conversation. It runs the agent loop, opens an approval gate when the
 * policy says a person must decide, and waits durably (state + condition with a timeout), so a click
 * hours later, after any restart, resumes it by replay.
 */
import * as wf from '@temporalio/workflow';
import type { createActivities } from '../../activities';
import type { SessionSettings } from './settings';
import {
  AgentChannel,
  AgentCredentialWaits,
  AgentOwner,
  AgentStatus,
  ANYONE,
  credentialWaitValue,
  type SessionStatus,
} from '../../common/search-attributes';
import { parseTextAnswer, parseTextAnswers, typedAnswerHint } from '../../common/tools/ask-user';
import { checkToolArgs, findTool, type ToolDefinition } from '../../common/tools/definitions';
import { checkCall, sessionTool, toolEffect } from '../../common/tools/registry';
import { FailureType } from '../../common/errors';
import type { Grant } from '../../common/grants';
import {
  describeMcpDiscovery,
  MCP_REFRESH_TOOL,
  type McpDiscovery,
  type McpToolSpec,
} from '../../common/tools/mcp';
import {
  answerDraftSchema,
  answerDraftSignal,
  answerSignal,
  answerSubmissionSchema,
  credentialProvidedSchema,
  credentialProvidedSignal,
  missionEventSignal,
  gateFeedbackQuery,
  decideSignal,
  decisionSchema,
  revokeGrantSchema,
  revokeGrantSignal,
  pendingGatesQuery,
  repostPendingSchema,
  repostPendingSignal,
  stateQuery,
  transcriptQuery,
  userMessageSchema,
  userMessageSignal,
  type AnswerSubmission,
  type Decision,
  type Gate,
  type Message,
  type SessionInput,
  type ToolCall,
  type ToolResultStatus,
  type UserMessage,
} from './contract';
import {
  answeredResult,
  cancelGate,
  clock,
  connectGate,
  describeWaiting,
  expireGate,
  mirrorRemoteGate,
  resolveGate,
  supersedeGate,
  describeOutcome,
  evaluateAnswer,
  evaluateDecision,
  mayDecide,
  mergeDraft,
  readTypedAnswers,
  openApprovalGate,
  openCredentialGate,
  openQuestionGate,
  parseTypedDecision,
  resultWithoutRun,
} from './gates';
import type { OutboundEvent } from './outbound';
import { runGateSignal, runNoticeSignal, type RunResult } from '../missions/contract';
import { orphanRuleMatters, repairTranscript } from './repair';
import { SessionState } from './state';
import { GATE_MEMO_KEY, gateMemos } from './gate-memo';
import { runWithSideEffects, TOOL_RUNS_ONCE } from './tool-runs';
import { bounded, hasResult, MAX_TOOL_ARGS_CHARS, unresolvedToolCalls } from './transcript';
import {
  buildContextWindow,
  DEFAULT_CONTEXT_TOKENS,
  MIN_CONTEXT_TOKENS,
  SUMMARY_SHARE,
} from './context-window';

type Activities = ReturnType<typeof createActivities>;

const { callModel } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 6,
    nonRetryableErrorTypes: [FailureType.ModelAuth, FailureType.ModelNotFound, FailureType.ModelBadRequest],
  },
});
/**
 * A model API that stays down after callModel's own retries: the turn waits (the message is kept) and tries
 * again with growing pauses, up to the policy's `modelOutageTimeout`. Histories from before keep failing the turn.
 */
const MODEL_OUTAGE_WAIT = 'model-outage-wait';
const MODEL_OUTAGE_FIRST_RETRY_MS = 15_000;
const MODEL_OUTAGE_MAX_RETRY_MS = 5 * 60_000;
const DEFAULT_MODEL_OUTAGE_TIMEOUT_MS = 6 * 3_600_000;
const PERMANENT_MODEL_FAILURES: string[] = [
  FailureType.ModelAuth,
  FailureType.ModelNotFound,
  FailureType.ModelBadRequest,
];

/** callModel gave up on something that may pass (5xx, 429, a timeout), not on a refusal that will not. */
function isModelOutage(error: unknown): boolean {
  if (!(error instanceof wf.ActivityFailure)) return false;
  const cause = error.cause;
  return !(
    cause instanceof wf.ApplicationFailure &&
    (cause.nonRetryable || PERMANENT_MODEL_FAILURES.includes(cause.type ?? ''))
  );
}

/** Read-only tool runs (and every run in histories from before `tool-runs-once`): retried freely. */
const { runTool } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});
/** How long a session trusts its list of MCP tools; while a server is down, it looks again sooner. */
const MCP_DISCOVERY_TTL_MS = 15 * 60_000;
const MCP_DOWN_RETRY_MS = 2 * 60_000;

/** Summaries are model calls too: retried like them, and a refusal leaves the older messages out instead. */
const { summarizeConversation } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '15 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 4,
    nonRetryableErrorTypes: [...PERMANENT_MODEL_FAILURES, FailureType.ContextTooLong],
  },
});
/** Patch markers: the inbox refuses messages over its limits (told); the carried transcript is bounded. */
const BOUNDED_INBOX = 'bounded-inbox';
const BOUNDED_CARRY = 'bounded-carry';
/** Patch marker: model requests are built within the policy's `contextTokens`, older turns summarised. */
const CONTEXT_WINDOW = 'context-window';

const { discoverMcpTools } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});
const { planToolCall, saveUserGrant, loadSettings, loadPreviousTranscript } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 20 },
});

const { deliver } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

const SIGNALS_BEFORE_CONTINUE = 5_000;
/** Patch marker: runs started before previous-run recovery existed replay without the extra activity. */
const RECOVER_PREVIOUS_RUN = 'recover-previous-run';
/** Patch markers: an orphan user turn behind interrupted calls gets its marker; a failed load is reported. */
const REPAIR_ORPHAN_BEHIND_RESULTS = 'repair-orphan-behind-results';
const REPORT_LOST_PREVIOUS_RUN = 'report-lost-previous-run';
/** The agent loop stops once the same call has failed the same way this many times in one turn. */
const STOP_REPEATED_ERRORS = 'stop-repeated-errors';
const MAX_IDENTICAL_ERRORS = 3;
/** Patch marker: a counted approval of a call that needs several edits the posted prompts (a new delivery). */
const APPROVAL_PROGRESS = 'approval-progress';
/** Patch markers: open gates kept in the memo (dialogs open without a worker); typed answers to several questions. */
const GATE_MEMO = 'gate-memo';
const TYPED_ANSWERS = 'typed-answers';
/** Patch markers: a mission run's gate shown in its owner's conversation is not superseded there; run gates get reminders. */
const RUN_GATES_DECIDED_BY_RUN = 'run-gates-decided-by-run';
const RUN_GATE_REMINDERS = 'run-gate-reminders';
/**
 * Patch marker: an activity that fails after its retries (settings, the policy check, a grant write, MCP
 * discovery, a delivery) becomes a message in the conversation and the session goes on; histories from
 * before fail the run (or the turn) as they did. Only the failure paths record it.
 */
const ACTIVITY_FAILURES_TOLD = 'activity-failures-told';
const MAX_UNDELIVERED = 10;
const MIN_WAIT_EVENTS_BEFORE_CONTINUE = 10;
const DEFAULT_QUESTION_TIMEOUT_MS = 24 * 3_600_000;
const EVENTS_BEFORE_CONTINUE = 10_000;

export async function sessionWorkflow(input: SessionInput): Promise<RunResult | void> {
  const sessionId = wf.workflowInfo().workflowId;
  const state = new SessionState(
    input,
    () => Date.now(),
    () => wf.uuid4(),
  );
  let signalsThisRun = 0;
  /** Messages refused while the inbox was full, per sender since their last accepted one. */
  const refusedWhileFull = new Map<string, number>();
  /** History size that triggers continue-as-new between turns; configurable so long sessions can be tested. */
  let continueAfterEvents = EVENTS_BEFORE_CONTINUE;
  let settings: SessionSettings = { maxSteps: 12 };
  let continuingAsNew = false;
  let mcpTools: McpToolSpec[] | undefined;
  /** When the MCP tools were last discovered, and which servers were down then. */
  let mcpDiscoveredAt = 0;
  let mcpDown = new Set<string>();

  const setStatus = (status: SessionStatus, waitingFor?: string): void => {
    state.status = status;
    wf.upsertSearchAttributes([
      { key: AgentStatus, value: status },
      { key: AgentChannel, value: input.channel },
      { key: AgentOwner, value: input.ownerId },
    ]);
    wf.upsertMemo({ waitingFor: waitingFor ?? null });
    state.touch();
  };

  /** A gate's dialogs are built from the memo, which the server serves while no worker runs (gate-memo.ts). */
  const rememberOpenGates = (): void => {
    if (wf.patched(GATE_MEMO)) wf.upsertMemo({ [GATE_MEMO_KEY]: gateMemos(state.pendingGates()) });
  };

  const applyDecision = (decision: Decision): void => {
    const gate = state.gates.get(decision.gateId);
    if (gate?.remote)
      return forward(gate.remote.workflowId, (h) => h.signal(decideSignal, decision), decision.userId);
    const tool = gate ? findTool(gate.toolName) : undefined;
    const check = evaluateDecision({
      gate,
      decision,
      now: Date.now(),
      checkArgs: (args) => (tool ? checkToolArgs(tool, args) : { ok: false, error: 'unknown tool' }),
      newGrantId: () => wf.uuid4(),
      sessionId,
    });
    if (!check.ok) return state.notify(check.notice, decision.userId);
    if (gate?.kind === 'approval') gate.approvals = check.approvals;
    if (!check.resolution) {
      // One more approval of a call that needs several: the approver is told, every prompt shows the count.
      state.notify(check.notice, decision.userId);
      if (wf.patched(APPROVAL_PROGRESS)) emit({ type: 'gate_updated', gate: gate! });
      return;
    }
    resolveGate(gate!, check.resolution);
    state.touch();
  };

  // Chat platforms are told about agent text, gates and notices through an ordered outbox; a mission run
  // reports its gates to its mission through the same ordered loop.
  const emitsToPlatform = input.channel === 'slack' || input.channel === 'discord';
  const runOf = input.run;
  const outbox: OutboundEvent[] = [];
  let delivering = false;
  /** What a platform did not take after every retry: told there once a delivery goes through again. */
  let undelivered: { what: string; reason: string }[] = [];
  /** The post telling them, while it is on its way: if it fails too, what it told is kept for the next one. */
  let telling: { event: OutboundEvent; told: typeof undelivered } | undefined;
  /** Why a mission run did not reach its goal (the model failed, or the step limit). */
  let runFailure: string | undefined;
  const emit = (event: OutboundEvent): void => {
    if (emitsToPlatform) outbox.push(event);
    else if (
      runOf &&
      ((event.type === 'gate' && event.reason !== 'repost') ||
        event.type === 'gate_resolved' ||
        (event.type === 'notice' && event.to))
    )
      outbox.push(event);
  };
  if (emitsToPlatform) {
    state.listener = {
      assistantText: (text) => emit({ type: 'message', text }),
      notice: (notice) =>
        emit({ type: 'notice', text: notice.text, ...(notice.to ? { to: notice.to } : {}) }),
    };
  } else if (runOf && wf.patched('run-notices-to-owner')) {
    // A run's gates are decided from its owner's conversation, so a refused click is told there.
    state.listener = {
      assistantText: () => {},
      notice: (notice) => {
        if (notice.to) emit({ type: 'notice', text: notice.text, to: notice.to });
      },
    };
  }
  if (emitsToPlatform || runOf) void deliverOutbox();

  /** Signals to another workflow (a mission run's decisions, a run's gates to its mission). */
  const forward = (
    workflowId: string,
    send: (handle: wf.ExternalWorkflowHandle) => Promise<void>,
    userId?: string,
  ) =>
    void send(wf.getExternalWorkflowHandle(workflowId)).catch(() =>
      state.notify('That mission run has already ended; nothing changed.', userId),
    );

  /**
   * Runs for the workflow's whole life, never awaited: cancelling the workflow (a mission ending a denied
   * run) rejects its wait, and that must end the loop, not fail the workflow task as an unhandled rejection.
   */
  async function deliverOutbox(): Promise<void> {
    for (;;) {
      try {
        await wf.condition(() => outbox.length > 0);
      } catch (error) {
        if (wf.isCancellation(error)) return;
        throw error;
      }
      const event = outbox.shift()!;
      delivering = true;
      try {
        if (runOf) {
          const mission = wf.getExternalWorkflowHandle(runOf.missionWorkflowId);
          if (event.type === 'gate' || event.type === 'gate_resolved')
            await mission.signal(runGateSignal, {
              runWorkflowId: sessionId,
              gate: event.gate,
              resolved: event.type === 'gate_resolved',
              ...(event.type === 'gate_resolved' ? { outcome: event.outcome } : {}),
              ...(event.type === 'gate' && event.reason === 'reminder' ? { reminder: true } : {}),
            });
          else if (event.type === 'notice' && event.to)
            await mission.signal(runNoticeSignal, {
              runWorkflowId: sessionId,
              text: event.text,
              to: event.to,
            });
          continue;
        }
        const result = await deliver({ sessionId, event });
        if (event.type === 'gate' && result.ref) {
          const gate = state.gates.get(event.gate.id);
          if (gate) gate.posts = [...(gate.posts ?? []), result.ref];
        }
        if (undelivered.length) {
          telling = { event: { type: 'message', text: describeUndelivered(undelivered) }, told: undelivered };
          outbox.unshift(telling.event);
          undelivered = [];
        }
      } catch (error) {
        if (wf.isCancellation(error)) return;
        wf.log.warn('delivery failed', { sessionId, type: event.type, error: failureMessage(error) });
        if (telling && event === telling.event) {
          undelivered = [...telling.told, ...undelivered].slice(-MAX_UNDELIVERED);
        } else {
          const what = lostInDelivery(event);
          if (what && !runOf && wf.patched(ACTIVITY_FAILURES_TOLD))
            undelivered = [...undelivered, { what, reason: failureMessage(error) }].slice(-MAX_UNDELIVERED);
        }
      } finally {
        delivering = false;
      }
    }
  }

  wf.setHandler(repostPendingSignal, (raw) => {
    signalsThisRun++;
    const parsed = repostPendingSchema.safeParse(raw);
    if (!parsed.success) return;
    const open = state.pendingGates();
    if (!open.length)
      return state.notify('Nothing is waiting for a decision in this conversation.', parsed.data.userId);
    for (const gate of open) emit({ type: 'gate', gate, reason: 'repost' });
  });

  wf.setHandler(stateQuery, () => state.view(sessionId));
  wf.setHandler(transcriptQuery, () => state.transcript);
  wf.setHandler(pendingGatesQuery, () => state.pendingGates());

  const applyAnswer = (submission: AnswerSubmission): void => {
    const gate = state.gates.get(submission.gateId);
    if (gate?.remote)
      return forward(gate.remote.workflowId, (h) => h.signal(answerSignal, submission), submission.userId);
    const check = evaluateAnswer(gate, submission, Date.now());
    if (!check.ok) return state.notify(check.notice, submission.userId);
    resolveGate(gate!, check.resolution);
    state.touch();
  };

  wf.setHandler(answerSignal, (raw) => {
    signalsThisRun++;
    const parsed = answerSubmissionSchema.safeParse(raw);
    if (!parsed.success)
      return state.notify(
        `Those answers were malformed and were ignored: ${parsed.error.message}`,
        raw?.userId,
      );
    applyAnswer(parsed.data);
  });

  wf.setHandler(gateFeedbackQuery, ({ gateId, userId, since }) => ({
    gate: state.gates.get(gateId) ?? null,
    notices: state.notices.filter((n) => n.to === userId && n.at >= since),
  }));

  wf.setHandler(answerDraftSignal, (raw) => {
    signalsThisRun++;
    const parsed = answerDraftSchema.safeParse(raw);
    if (!parsed.success)
      return state.notify(`That answer was malformed and was ignored: ${parsed.error.message}`, raw?.userId);
    const { gateId, userId, answers, texts, picks, submit } = parsed.data;
    const gate = state.gates.get(gateId);
    if (gate?.remote)
      return forward(gate.remote.workflowId, (h) => h.signal(answerDraftSignal, parsed.data), userId);
    if (gate?.kind !== 'question' || gate.status !== 'pending' || !mayDecide(gate, userId))
      return applyAnswer({ gateId, userId, answers }); // refused with the usual explanation
    const typed = readTypedAnswers(gate.questions, texts);
    if (!typed.ok) return state.notify(`${typed.error} The question is still open.`, userId);
    const picked = picks.flatMap(({ index, selected }) => {
      const question = gate.questions[index];
      return question ? [{ question: question.label, selected }] : [];
    });
    const merged = mergeDraft(gate.drafts?.[userId] ?? [], [...answers, ...picked, ...typed.answers]);
    gate.drafts = { ...gate.drafts, [userId]: merged };
    state.touch();
    const complete = gate.questions.every((q) => merged.some((a) => a.question === q.label));
    if (complete || submit) applyAnswer({ gateId, userId, answers: merged });
  });

  // A mission reporting here: its results, and its runs' gates (shown here, decided there).
  wf.setHandler(missionEventSignal, (event) => {
    signalsThisRun++;
    if (event.text) state.appendAssistantNote(event.text.slice(0, 20_000));
    if (event.notice)
      state.notify(`${event.missionName}: ${event.notice.text}`.slice(0, 2_000), event.notice.to);
    if (!event.gate || !event.runWorkflowId) return;
    const existing = state.gates.get(event.gate.id);
    if (!event.resolved) {
      // The run's reminder: the prompt posted here again while its gate stays open.
      if (existing?.remote && existing.status === 'pending' && event.reminder)
        return emit({ type: 'gate', gate: existing, reason: 'reminder' });
      if (existing) return;
      const proxy: Gate = {
        ...event.gate,
        posts: [],
        toolCallId: `${event.runWorkflowId}:${event.gate.toolCallId}`,
        remote: { workflowId: event.runWorkflowId, missionName: event.missionName },
      };
      state.gates.set(proxy.id, proxy);
      state.touch();
      emit({ type: 'gate', gate: proxy, reason: 'opened' });
      return;
    }
    if (!existing?.remote || existing.status !== 'pending') return;
    mirrorRemoteGate(existing, event.gate);
    state.touch();
    emit({ type: 'gate_resolved', gate: existing, outcome: event.outcome ?? describeOutcome(existing) });
  });

  // A sign-in finished (the gateway's OAuth callback or key form): resumes this person's waits on that provider.
  wf.setHandler(credentialProvidedSignal, (raw) => {
    signalsThisRun++;
    const parsed = credentialProvidedSchema.safeParse(raw);
    if (!parsed.success) return;
    const { provider, userId } = parsed.data;
    for (const gate of state.pendingGates()) {
      if (gate.kind !== 'credential' || gate.provider !== provider) continue;
      // Only the person whose credential it is — or anyone, for a shared mission's run.
      if (gate.requesterId !== userId && !runOf?.shared) continue;
      connectGate(gate, userId, Date.now());
      state.touch();
    }
  });

  wf.setHandler(decideSignal, (raw) => {
    signalsThisRun++;
    const parsed = decisionSchema.safeParse(raw);
    if (!parsed.success)
      return state.notify(
        `That decision was malformed and was ignored: ${parsed.error.message}`,
        raw?.userId,
      );
    applyDecision(parsed.data);
  });

  wf.setHandler(revokeGrantSignal, (raw) => {
    signalsThisRun++;
    const parsed = revokeGrantSchema.safeParse(raw);
    if (!parsed.success) return;
    const revoked = state.revokeGrant(parsed.data.grantId, parsed.data.userId);
    state.notify(
      revoked ? 'Grant revoked.' : 'No such grant of yours in this conversation.',
      parsed.data.userId,
    );
  });

  wf.setHandler(userMessageSignal, (raw) => {
    signalsThisRun++;
    const parsed = userMessageSchema.safeParse(raw);
    if (!parsed.success) return;
    const message = parsed.data;
    if (state.seen(message.messageId)) return; // a gateway retried the same message
    const textAnswer = answerFromText(message);
    if (textAnswer === 'refused') return;
    if (textAnswer) return applyAnswer(textAnswer);
    const open = state.pendingApprovals();
    const typed = parseTypedDecision(message.text);
    if (typed && open.length === 1) {
      return applyDecision({
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
    for (const gate of state.pendingGates().filter((g) => g.requesterId === message.userId)) {
      // A mission run's gate shown here is decided only by the run: a new message here does not end it.
      if (gate.remote && wf.patched(RUN_GATES_DECIDED_BY_RUN)) continue;
      supersedeGate(gate, message.userId, Date.now());
      state.supersededTurn = true;
    }
    const full = wf.patched(BOUNDED_INBOX) ? state.inboxFull(message) : undefined;
    if (full) {
      // Told at the first refusal and every tenth after it: a flood is not answered with a flood of notices.
      const refused = (refusedWhileFull.get(message.userId) ?? 0) + 1;
      refusedWhileFull.set(message.userId, refused);
      if (refused % 10 === 1)
        state.notify(
          `Your message was not queued${refused > 1 ? ` (nor ${refused - 1} before it)` : ''}: ${full}. Send it again once I have answered the ones before it.`,
          message.userId,
        );
      return;
    }
    refusedWhileFull.delete(message.userId);
    state.enqueue(message);
  });

  /** The state the next run starts from; the transcript is bounded so the carried payload stays under 2 MB. */
  function carry() {
    return wf.patched(BOUNDED_CARRY)
      ? state.carry({ boundTranscript: { previousRunId: wf.workflowInfo().runId } })
      : state.carry();
  }

  /**
   * A session that starts from an existing transcript (continue-as-new, an import, or a new run after a
   * terminated one) repairs its tail first, so the model never sees a tool call without a result.
   */
  async function restoreTranscript(): Promise<void> {
    if (!input.carried?.transcript.length && wf.patched(RECOVER_PREVIOUS_RUN)) {
      const previous = await loadPreviousTranscript().catch((error: unknown) => {
        if (!wf.patched(REPORT_LOST_PREVIOUS_RUN)) return [];
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
    const orphanBehindResults =
      !orphanRuleMatters(state.transcript, live) || wf.patched(REPAIR_ORPHAN_BEHIND_RESULTS);
    const { transcript, report } = repairTranscript(state.transcript, Date.now(), () => wf.uuid4(), {
      liveCallIds: live,
      orphanBehindResults,
    });
    if (report.interruptedCalls.length || report.recoveredUserTurn) {
      state.transcript = transcript;
      state.touch();
      wf.log.warn('transcript repaired', { sessionId, ...report });
    }
  }

  /**
   * The text fallback: a reply like "2" or "other: ..." to the asker's only open single question answers
   * it; "1: 2; 2: 1,3" answers several questions, and a reply in that form that does not fit is refused
   * with what is missing or invalid, the question staying open.
   */
  function answerFromText(message: UserMessage): AnswerSubmission | 'refused' | undefined {
    const questions = state.pendingQuestions().filter((g) => mayDecide(g, message.userId));
    if (questions.length !== 1) return undefined;
    const gate = questions[0]!;
    if (gate.questions.length === 1) {
      const answer = parseTextAnswer(gate.questions[0]!, message.text);
      return answer ? { gateId: gate.id, userId: message.userId, answers: [answer] } : undefined;
    }
    const typed = parseTextAnswers(gate.questions, message.text);
    if (!typed || !wf.patched(TYPED_ANSWERS)) return undefined;
    if (typed.ok) return { gateId: gate.id, userId: message.userId, answers: typed.answers };
    state.notify(
      `Your answers were not taken: ${typed.error}. ${typedAnswerHint(gate.questions)}. The question is still open.`,
      message.userId,
    );
    return 'refused';
  }

  await restoreTranscript();
  const resumedTurn = input.carried?.turn;
  if (resumedTurn) {
    setStatus('running');
    await refreshSettings();
    await continueTurn(resumedTurn.requesterId, {
      calls: unresolvedToolCalls(state.transcript),
      step: resumedTurn.step,
    });
  }
  if (runOf) {
    // A mission run: the goal (and nothing else) is its one turn; the result goes back to the mission.
    while (state.inbox.length) await runTurn(state.inbox.shift()!);
    await wf.condition(() => outbox.length === 0 && !delivering);
    const answer = [...state.transcript]
      .reverse()
      .find(
        (m): m is Extract<Message, { role: 'assistant' }> =>
          m.role === 'assistant' && !m.synthetic && !!m.text.trim(),
      );
    return runFailure
      ? { ok: false, answer: answer?.text ?? '', reason: runFailure }
      : { ok: true, answer: answer?.text ?? '(no answer)' };
  }
  setStatus(state.inbox.length ? 'running' : 'idle');
  for (;;) {
    await wf.condition(
      () => state.inbox.length > 0 || shouldContinueAsNew(signalsThisRun, continueAfterEvents),
    );
    if (shouldContinueAsNew(signalsThisRun, continueAfterEvents)) {
      await wf.condition(() => wf.allHandlersFinished() && outbox.length === 0 && !delivering);
      return await wf.continueAsNew<typeof sessionWorkflow>({ ...input, carried: carry() });
    }
    const message = state.inbox.shift()!;
    await runTurn(message);
  }

  async function runTurn(message: UserMessage): Promise<void> {
    state.append({
      role: 'user',
      id: message.messageId,
      userId: message.userId,
      text: message.text,
      at: Date.now(),
    });
    state.supersededTurn = false;
    setStatus('running');
    if (message.ref) emit({ type: 'working', on: true, ref: message.ref });
    try {
      await refreshSettings();
      await continueTurn(message.userId);
    } finally {
      if (message.ref && !continuingAsNew) emit({ type: 'working', on: false, ref: message.ref });
    }
  }

  async function refreshSettings(): Promise<void> {
    try {
      settings = await loadSettings();
    } catch (error) {
      if (wf.isCancellation(error) || !wf.patched(ACTIVITY_FAILURES_TOLD)) throw error;
      wf.log.error('loading settings failed', { sessionId, error: failureMessage(error) });
      state.appendAssistantNote(
        `⚠️ I could not load my settings (${failureMessage(error)}), so this turn goes on with the ones I had.`,
      );
    }
    continueAfterEvents = settings.continueAsNewAfterEvents ?? EVENTS_BEFORE_CONTINUE;
  }

  /** The model loop of one turn; `resume` picks up a step whose gates were open across continue-as-new. */
  async function continueTurn(
    requesterId: string,
    resume?: { calls: ToolCall[]; step: number },
  ): Promise<void> {
    let step = resume?.step ?? 0;
    /** Failing calls of this turn by (tool, arguments, error), to stop a loop on the same failure. */
    const failures = new Map<string, number>();
    try {
      if (resume) {
        await handleToolCalls(resume.calls, requesterId, step);
        step++;
      }
      while (!state.supersededTurn) {
        if (step >= settings.maxSteps) {
          state.appendAssistantNote(
            `I stopped after ${settings.maxSteps} steps (the step limit) without a final answer. Tell me how to continue.`,
          );
          runFailure = `stopped at the step limit (${settings.maxSteps} steps)`;
          break;
        }
        const reply = await askModel(requesterId);
        if (!reply) break;
        state.append({
          role: 'assistant',
          id: wf.uuid4(),
          text: bounded(reply.text),
          toolCalls: reply.toolCalls,
          at: Date.now(),
        });
        if (reply.toolCalls.length === 0) break;
        await handleToolCalls(reply.toolCalls, requesterId, step);
        step++;
        const repeated = repeatedFailure(reply.toolCalls, failures);
        if (repeated && wf.patched(STOP_REPEATED_ERRORS)) {
          state.appendAssistantNote(
            `I stopped: ${repeated.name} failed the same way ${MAX_IDENTICAL_ERRORS} times (${repeated.content.slice(0, 300)}). Tell me how to proceed.`,
          );
          runFailure = `${repeated.name} failed the same way ${MAX_IDENTICAL_ERRORS} times: ${repeated.content.slice(0, 200)}`;
          break;
        }
      }
    } catch (error) {
      if (wf.isCancellation(error))
        closeUnresolvedCalls('cancelled', 'cancelled: the session was cancelled before this call finished.');
      throw error;
    } finally {
      if (!continuingAsNew) setStatus('idle');
    }
  }

  function repeatedFailure(calls: ToolCall[], failures: Map<string, number>) {
    for (const call of calls) {
      const result = state.transcript.find(
        (m): m is Extract<Message, { role: 'tool' }> => m.role === 'tool' && m.toolCallId === call.id,
      );
      if (!result || (result.status !== 'error' && result.status !== 'failed')) continue;
      const key = `${call.name}\n${JSON.stringify(call.args)}\n${result.content}`;
      const count = (failures.get(key) ?? 0) + 1;
      failures.set(key, count);
      if (count >= MAX_IDENTICAL_ERRORS) return result;
    }
    return undefined;
  }

  /**
   * MCP tools are discovered once per run, again after a tool server is connected, and again when the list
   * is older than the configured `mcpRefreshAfter` (sooner while a server is down), so a server that comes back or
   * changes its tools is picked up. A server's outage is told once, and its return too.
   */
  async function refreshMcpTools(userId: string, now = false): Promise<McpDiscovery | undefined> {
    if (!settings.mcpServers?.length) return undefined;
    const age = Date.now() - mcpDiscoveredAt;
    const ttl = settings.mcpRefreshAfterMs ?? MCP_DISCOVERY_TTL_MS;
    const stale = ttl !== 'never' && age > (mcpDown.size ? Math.min(ttl, MCP_DOWN_RETRY_MS) : ttl);
    if (!now && mcpTools && !(stale && wf.patched('mcp-discovery-ttl'))) return undefined;
    const discovery = await discoverMcpTools({ userId }).catch((error: unknown) => {
      if (wf.isCancellation(error) || !wf.patched(ACTIVITY_FAILURES_TOLD)) throw error;
      // Told like a server that is down (once, and again when it is back): the tools known so far stay.
      const message = `looking up its tools failed: ${failureMessage(error)}`;
      return {
        tools: mcpTools ?? [],
        errors: (settings.mcpServers ?? []).map((server) => ({ server, message })),
      } satisfies McpDiscovery;
    });
    mcpTools = discovery.tools;
    mcpDiscoveredAt = Date.now();
    const down = new Set(discovery.errors.map((e) => e.server));
    for (const problem of discovery.errors)
      if (!mcpDown.has(problem.server))
        state.notify(
          `The "${problem.server}" tool server is unavailable (${problem.message}); its tools are left out, everything else works.`,
        );
    for (const server of mcpDown)
      if (!down.has(server))
        state.notify(`The "${server}" tool server is back; its tools are available again.`);
    mcpDown = down;
    return discovery;
  }

  /**
   * What the model is sent: the transcript within the context window, older messages replaced by a durable
   * summary (made here when the window moves on, recorded in history as the activity's result).
   */
  async function modelTranscript(shrink: boolean, extraTools: unknown[]): Promise<Message[]> {
    if (!wf.patched(CONTEXT_WINDOW)) return state.transcript;
    const budget = Math.max(
      MIN_CONTEXT_TOKENS,
      Math.floor((settings.contextTokens ?? DEFAULT_CONTEXT_TOKENS) / (shrink ? 2 : 1)),
    );
    const overhead =
      (settings.requestOverheadTokens ?? 0) +
      (extraTools.length ? Math.ceil(JSON.stringify(extraTools).length / 3.5) : 0);
    const window = buildContextWindow(state.transcript, budget, overhead);
    if (!window.toSummarise.length) return window.messages;
    try {
      const summary = await summarizeConversation({
        ...(window.previousSummary ? { previousSummary: window.previousSummary } : {}),
        messages: window.toSummarise,
        contextTokens: budget,
        maxSummaryTokens: Math.floor(budget * SUMMARY_SHARE),
      });
      state.appendSummary(summary, window.summariseThroughId!);
      return buildContextWindow(state.transcript, budget, overhead).messages;
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
      // The older messages are left out (the request says so); the turn goes on, and the next one tries again.
      state.notify(
        `I could not summarise the earlier part of this conversation (${failureMessage(error)}); the model sees only the recent messages for now.`,
      );
      return window.messages;
    }
  }

  async function askModel(requesterId: string) {
    /** While the model API is down: since when, and the next wait (doubling up to a ceiling). */
    let outageSince: number | undefined;
    let retryIn = MODEL_OUTAGE_FIRST_RETRY_MS;
    /** Set after the provider said the request was too long: the window is halved, once. */
    let shrink = false;
    for (;;) {
      try {
        await refreshMcpTools(requesterId);
        const extraTools = [
          ...(mcpTools ?? []).map(({ name, description, parameters }) => ({ name, description, parameters })),
          ...(settings.mcpServers?.length ? [MCP_REFRESH_TOOL] : []),
        ];
        const transcript = await modelTranscript(shrink, extraTools);
        const answer = extraTools.length
          ? await callModel({ transcript, extraTools })
          : await callModel({ transcript });
        if (outageSince !== undefined) {
          state.notify('The model is answering again.');
          setStatus('running');
        }
        return answer;
      } catch (error) {
        if (wf.isCancellation(error)) throw error;
        if (!shrink && failureType(error) === FailureType.ContextTooLong && wf.patched(CONTEXT_WINDOW)) {
          shrink = true;
          continue;
        }
        // An outage (not a refusal like a bad key) keeps the turn waiting, up to modelOutageTimeout.
        const budget = settings.modelOutageTimeoutMs ?? DEFAULT_MODEL_OUTAGE_TIMEOUT_MS;
        if (
          isModelOutage(error) &&
          Date.now() - (outageSince ?? Date.now()) < budget &&
          wf.patched(MODEL_OUTAGE_WAIT)
        ) {
          if (outageSince === undefined) {
            outageSince = Date.now();
            state.notify(
              `The model is unavailable (${failureMessage(error)}); retrying since ${clock(outageSince)}. Your message is kept and will be answered when it is back.`,
            );
            setStatus('running', `model unavailable, retrying since ${clock(outageSince)}`);
          }
          await wf.sleep(retryIn);
          retryIn = Math.min(retryIn * 2, MODEL_OUTAGE_MAX_RETRY_MS);
          continue;
        }
        state.appendAssistantNote(`⚠️ I could not get an answer from the model: ${failureMessage(error)}`);
        runFailure = `the model failed: ${failureMessage(error)}`;
        if (outageSince !== undefined) setStatus('running');
        return undefined;
      }
    }
  }

  /**
   * One model step's tool calls in three phases: validate and ask the policy for each; open every
   * approval of the step at once (so people see all prompts together) and wait for all; then run the
   * approved calls in the model's order. Every call ends with exactly one result.
   */
  async function handleToolCalls(calls: ToolCall[], requesterId: string, step: number): Promise<void> {
    const approved: {
      call: ToolCall;
      tool: ToolDefinition;
      args: Record<string, unknown>;
      gate?: Gate;
    }[] = [];
    for (const call of calls) {
      if (hasResult(state.transcript, call.id)) continue;
      if (call.argsTooLarge) {
        state.appendToolResult(
          call,
          'error',
          `not run: the arguments were ${call.argsTooLarge.toLocaleString('en-US')} characters long; the limit is ${MAX_TOOL_ARGS_CHARS.toLocaleString('en-US')}. Pass large content in smaller parts.`,
        );
        continue;
      }
      const resolved = sessionTool(call.name, { mcpTools, mcpServers: settings.mcpServers });
      if (resolved.kind === 'mcp_refresh') {
        // Only looks: nothing runs on a server, so no approval.
        const discovery = await refreshMcpTools(requesterId, true);
        state.appendToolResult(call, 'ok', describeMcpDiscovery(settings.mcpServers ?? [], discovery!));
        continue;
      }
      if (resolved.kind === 'unknown') {
        state.appendToolResult(call, 'error', resolved.error);
        continue;
      }
      const checked = checkCall(resolved, call.args);
      if (!checked.ok) {
        state.appendToolResult(call, 'error', checked.error);
        continue;
      }
      const tool = checked.definition;
      const existing = state.gateForCall(call.id);
      if (existing) {
        // Resumed after continue-as-new: the gate (and any decision on it) carried over.
        approved.push({
          call,
          tool,
          args: existing.kind === 'approval' ? existing.args : checked.args,
          gate: existing,
        });
        continue;
      }
      if (checked.kind === 'question') {
        // ask_user only asks: it becomes a question gate whatever the policy says, and never runs as an activity.
        const gate = openQuestionGate({
          id: wf.uuid4(),
          toolCallId: call.id,
          questions: checked.args.questions,
          requesterId,
          approvers: settings.approvers ?? [],
          now: Date.now(),
          timeoutMs: settings.questionTimeoutMs ?? DEFAULT_QUESTION_TIMEOUT_MS,
        });
        state.gates.set(gate.id, gate);
        rememberOpenGates();
        emit({ type: 'gate', gate, reason: 'opened' });
        approved.push({ call, tool, args: checked.args, gate });
        continue;
      }
      let plan: Awaited<ReturnType<typeof planToolCall>>;
      try {
        plan = await planToolCall({
          toolName: tool.name,
          args: checked.args,
          userId: requesterId,
          sessionId,
          sessionGrants: state.grants,
        });
      } catch (error) {
        if (wf.isCancellation(error) || !wf.patched(ACTIVITY_FAILURES_TOLD)) throw error;
        state.appendToolResult(
          call,
          'failed',
          `not run: the policy check failed (${failureMessage(error)}), so nobody could be asked to approve it.`,
        );
        continue;
      }
      if (plan.decision === 'deny') {
        state.appendToolResult(call, 'denied', `denied by policy: ${plan.reason}. The tool was not run.`);
        continue;
      }
      const gate =
        plan.decision === 'ask'
          ? openApprovalGate({
              id: wf.uuid4(),
              toolCallId: call.id,
              toolName: tool.name,
              args: checked.args,
              subject: tool.subject(checked.args),
              requesterId,
              approvers: plan.approvers,
              now: Date.now(),
              timeoutMs: plan.timeoutMs,
              // Absent from plans recorded before four-eyes and quorum: one approval, self-approval allowed.
              ...(plan.selfApprove === undefined ? {} : { selfApprove: plan.selfApprove }),
              ...(plan.approvals === undefined ? {} : { approvalsNeeded: plan.approvals }),
            })
          : undefined;
      if (gate) {
        state.gates.set(gate.id, gate);
        rememberOpenGates();
        emit({ type: 'gate', gate, reason: 'opened' });
      }
      approved.push({ call, tool, args: checked.args, ...(gate ? { gate } : {}) });
    }

    const gates = approved.flatMap((entry) => (entry.gate ? [entry.gate] : []));
    if (gates.length) {
      setStatus(
        gates.some((g) => g.kind === 'approval') ? 'waiting_approval' : 'waiting_answer',
        describeWaiting(gates),
      );
      // Long waits can outgrow the history: continue as new mid-wait, carrying the open gates and this turn.
      // Only events that arrive during the wait (clicks, notices) count, so a resumed wait never churns.
      const eventsAtWaitStart = wf.workflowInfo().historyLength;
      await Promise.race([
        Promise.all(gates.map(waitForDecision)),
        wf.condition(
          () =>
            wf.workflowInfo().historyLength - eventsAtWaitStart >= MIN_WAIT_EVENTS_BEFORE_CONTINUE &&
            shouldContinueAsNew(signalsThisRun, continueAfterEvents),
        ),
      ]);
      if (gates.some((gate) => gate.status === 'pending')) {
        continuingAsNew = true;
        await wf.condition(() => wf.allHandlersFinished() && outbox.length === 0 && !delivering);
        await wf.continueAsNew<typeof sessionWorkflow>({
          ...input,
          carried: { ...carry(), turn: { requesterId, step } },
        });
      }
      setStatus('running');
    }

    for (const entry of approved) {
      const { call, gate } = entry;
      const unrun = gate ? resultWithoutRun(gate) : undefined;
      if (unrun) {
        state.appendToolResult(call, unrun.status, unrun.content);
        continue;
      }
      if (gate?.kind === 'question') {
        state.appendToolResult(call, 'ok', answeredResult(gate));
        continue;
      }
      if (state.supersededTurn) {
        state.appendToolResult(call, 'superseded', 'not run: superseded by a new message from the user.');
        continue;
      }
      let args = entry.args;
      let preface = '';
      const resolution = gate?.resolution;
      if (resolution?.outcome === 'edited' && resolution.args) {
        args = resolution.args;
        preface = `Note: @${resolution.by} edited the arguments before approving; it ran with ${JSON.stringify(args)}.\n`;
      }
      if (resolution?.outcome === 'always' && resolution.grant) {
        if (resolution.grant.scope === 'user') await saveGrant(resolution.grant, entry.tool.name);
        else state.grants.push(resolution.grant);
      }
      await execute(call, entry.tool.name, args, preface, requesterId);
    }
  }

  /**
   * Stores a personal "always" grant. A write the user directory refuses (or that fails after its retries)
   * is told; the call it came with still runs, since it was approved.
   */
  async function saveGrant(grant: Grant, toolName: string): Promise<void> {
    try {
      await saveUserGrant(grant);
    } catch (error) {
      if (wf.isCancellation(error) || !wf.patched(ACTIVITY_FAILURES_TOLD)) throw error;
      state.appendAssistantNote(
        `⚠️ @${grant.userId}'s standing approval for ${toolName} could not be saved (${failureMessage(error)}): this call runs as approved, and the next one will be asked about again.`,
      );
    }
  }

  /**
   * Runs a tool (one with side effects at most once: tool-runs.ts). A tool whose credential the person has
   * not connected comes back `credential_required` (nothing ran): the session opens a credential gate, waits
   * for the sign-in, and runs it then.
   */
  async function execute(
    call: ToolCall,
    toolName: string,
    args: Record<string, unknown>,
    preface: string,
    userId: string,
  ): Promise<void> {
    // Models and proxies reuse tool call ids: the key is the workflow's own id for this call.
    const once = wf.patched(TOOL_RUNS_ONCE);
    const idempotencyKey = `${sessionId}:${once ? wf.uuid4() : call.id}`;
    const tool = sessionTool(toolName, { mcpTools, mcpServers: settings.mcpServers });
    const sideEffects = once && toolEffect(tool, args) === 'side-effects';
    for (let attempt = 1; ; attempt++) {
      let result;
      try {
        const request = { toolName, args, idempotencyKey, sessionId, userId };
        result = sideEffects ? await runWithSideEffects(request) : await runTool(request);
      } catch (error) {
        if (wf.isCancellation(error)) throw error;
        return state.appendToolResult(call, 'failed', `failed: ${failureMessage(error)}`);
      }
      // Connecting a tool server makes its real tools appear: discover again before the next model call.
      if (result.status === 'ok' && toolName.endsWith('__connect')) mcpTools = undefined;
      if (result.status !== 'credential_required' || !result.credential) {
        return state.appendToolResult(
          call,
          result.status === 'credential_required' ? 'error' : result.status,
          preface + result.content,
        );
      }
      if (attempt > 2) return state.appendToolResult(call, 'error', `not run: ${result.content}`);
      const gate = openCredentialGate({
        id: wf.uuid4(),
        toolCallId: call.id,
        toolName,
        provider: result.credential.provider,
        providerName: result.credential.providerName,
        credentialKind: result.credential.kind,
        requesterId: userId,
        now: Date.now(),
        timeoutMs: settings.credentialTimeoutMs ?? DEFAULT_QUESTION_TIMEOUT_MS,
      });
      if (result.credential.note) gate.note = result.credential.note.slice(0, 500);
      state.gates.set(gate.id, gate);
      emit({ type: 'gate', gate, reason: 'opened' });
      setStatus('waiting_credential', describeWaiting([gate]));
      wf.upsertSearchAttributes([
        {
          key: AgentCredentialWaits,
          value: [
            credentialWaitValue(userId, gate.provider),
            ...(runOf?.shared ? [credentialWaitValue(ANYONE, gate.provider)] : []),
          ],
        },
      ]);
      await waitForDecision(gate);
      wf.upsertSearchAttributes([{ key: AgentCredentialWaits, value: [] }]);
      setStatus('running');
      const unrun = resultWithoutRun(gate);
      if (unrun) return state.appendToolResult(call, unrun.status, unrun.content);
      // Someone else signed in for a shared mission: the run now acts with their credential.
      if (gate.resolution?.outcome === 'connected' && gate.resolution.by !== userId) {
        preface += `Note: this ran with @${gate.resolution.by}'s ${gate.providerName} account.\n`;
        userId = gate.resolution.by;
      }
    }
  }

  async function waitForDecision(gate: Gate): Promise<void> {
    // Chat platforms get a reminder (the prompt posted again) while a gate stays open; the web chat shows it live.
    // A mission run's gate is shown in its owner's conversation, which may be a chat platform: it is reminded too.
    const reminds =
      emitsToPlatform ||
      (runOf !== undefined && settings.reminderAfterMs !== undefined && wf.patched(RUN_GATE_REMINDERS));
    const reminderMs = reminds ? settings.reminderAfterMs : undefined;
    for (;;) {
      const untilExpiry = gate.expiresAt === null ? undefined : Math.max(0, gate.expiresAt - Date.now());
      const wait =
        reminderMs !== undefined && (untilExpiry === undefined || reminderMs < untilExpiry)
          ? reminderMs
          : untilExpiry;
      const decided =
        wait === undefined
          ? await wf.condition(() => gate.status !== 'pending').then(() => true)
          : await wf.condition(() => gate.status !== 'pending', wait);
      if (decided || gate.status !== 'pending') break;
      if (wait === untilExpiry) {
        expireGate(gate, Date.now());
        break;
      }
      emit({ type: 'gate', gate, reason: 'reminder' });
    }
    emit({ type: 'gate_resolved', gate, outcome: describeOutcome(gate) });
    state.notify(`${gate.toolName} ${describeOutcome(gate)}.`);
  }

  function closeUnresolvedCalls(status: ToolResultStatus, content: string): void {
    for (const call of unresolvedToolCalls(state.transcript)) state.appendToolResult(call, status, content);
    for (const gate of state.pendingApprovals()) cancelGate(gate, Date.now());
  }
}

function failureType(error: unknown): string | undefined {
  return error instanceof wf.ActivityFailure && error.cause instanceof wf.ApplicationFailure
    ? (error.cause.type ?? undefined)
    : undefined;
}

function failureMessage(error: unknown): string {
  return error instanceof wf.ActivityFailure && error.cause ? error.cause.message : String(error);
}

/** What a person missed when an event never reached their platform (edits and reactions are not missed). */
function lostInDelivery(event: OutboundEvent): string | undefined {
  if (event.type === 'message') return event.text.slice(0, 3_000);
  if (event.type === 'gate' && event.reason !== 'reminder')
    return `(the ${event.gate.toolName} prompt: say "pending" to see the open prompts again)`;
  return undefined;
}

function describeUndelivered(lost: { what: string; reason: string }[]): string {
  return [
    `⚠️ ${lost.length === 1 ? 'This' : `These ${lost.length} messages`} could not be posted here earlier (${lost.at(-1)!.reason}):`,
    ...lost.map((entry) => entry.what),
  ].join('\n\n');
}

function shouldContinueAsNew(signalsThisRun: number, eventsLimit: number): boolean {
  const info = wf.workflowInfo();
  return (
    info.continueAsNewSuggested ||
    info.historyLength > eventsLimit ||
    signalsThisRun > SIGNALS_BEFORE_CONTINUE
  );
}

export type { Message };
