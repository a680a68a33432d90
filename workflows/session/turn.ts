/**
 * The turn loop: the user's message, then model steps until an answer. Each step's tool calls are validated,
 * checked against the policy, gated (approval, question, credential) and run, every call ending with exactly
 * one result. A model API outage waits; a request too long for the model's context is summarised and retried.
 */
import * as wf from '@temporalio/workflow';
import { AgentCredentialWaits, credentialWaitValue } from '../../common/search-attributes';
import { FailureType } from '../../common/errors';
import type { Grant } from '../../common/grants';
import type { ToolDefinition } from '../../common/tools/definitions';
import { checkCall, sessionTool, toolEffect } from '../../common/tools/registry';
import { resultIsOwnText } from '../../common/tools/missions';
import {
  buildContextWindow,
  DEFAULT_CONTEXT_TOKENS,
  MIN_CONTEXT_TOKENS,
  SUMMARY_SHARE,
} from './context-window';
import { distinctCallIds } from './call-ids';
import { carriedBudgetGateId, countUsage, newTurnSpend, withinBudget } from './budget';
import type { CarriedTurn, Gate, Message, ToolCall, ToolResultStatus, UserMessage } from './contract';
import {
  answeredResult,
  cancelGate,
  clock,
  describeOutcome,
  describeWaiting,
  openApprovalGate,
  openCredentialGate,
  openQuestionGate,
  resultWithoutRun,
  stopGate,
} from './gates';
import {
  callModel,
  failureMessage,
  failureType,
  PERMANENT_MODEL_FAILURES,
  planToolCall,
  runTool,
  saveUserGrant,
  summarizeConversation,
} from './session-activities';
import { waitForGates } from './gate-wait';
import { continueOnCurrentVersion } from '../upgrade';
import type { SessionRun } from './session-run';
import { runWithSideEffects } from './tool-runs';
import { TRANSCRIPT_CHUNKS_MISSING } from '../../common/transcript-chunks';
import { bounded, hasResult, MAX_TOOL_ARGS_CHARS, unresolvedToolCalls } from './transcript';
import type { sessionWorkflow } from './workflow';

const MODEL_OUTAGE_FIRST_RETRY_MS = 15_000;
const MODEL_OUTAGE_MAX_RETRY_MS = 5 * 60_000;
const DEFAULT_MODEL_OUTAGE_TIMEOUT_MS = 6 * 3_600_000;
/** The agent loop stops once the same call has failed the same way this many times in one turn. */
const MAX_IDENTICAL_ERRORS = 3;
const DEFAULT_QUESTION_TIMEOUT_MS = 24 * 3_600_000;

/** callModel gave up on something that may pass (5xx, 429, a timeout), not on a refusal that will not. */
function isModelOutage(error: unknown): boolean {
  if (!(error instanceof wf.ActivityFailure)) return false;
  const cause = error.cause;
  return !(
    cause instanceof wf.ApplicationFailure &&
    (cause.nonRetryable || PERMANENT_MODEL_FAILURES.includes(cause.type ?? ''))
  );
}

export async function runTurn(run: SessionRun, message: UserMessage): Promise<void> {
  run.state.append({
    role: 'user',
    id: message.messageId,
    userId: message.userId,
    text: message.text,
    at: Date.now(),
  });
  run.state.supersededTurn = false;
  run.setStatus('running');
  if (message.ref) run.emit({ type: 'working', on: true, ref: message.ref, to: message.userId });
  try {
    await stoppable(run, message.userId, async () => {
      await run.refreshSettings();
      await continueTurn(run, message.userId);
    });
  } finally {
    if (message.ref && !run.continuingAsNew) run.emit({ type: 'working', on: false, ref: message.ref });
  }
}

/**
 * Runs a turn's work in a cancellation scope of its own, so Stop (session-run.ts) cancels this turn and nothing
 * else: the model call is abandoned and a running tool cancelled (the activity sees it at its next heartbeat and
 * kills what it started), the turn's open gates close as stopped (continueTurn), queued messages stay queued,
 * and the conversation goes on with the next one. A cancellation of the whole workflow still ends it.
 */
export async function stoppable(
  run: SessionRun,
  requesterId: string,
  work: () => Promise<void>,
): Promise<void> {
  const scope = new wf.CancellationScope();
  run.turn = { scope, requesterId };
  try {
    await scope.run(work);
  } catch (error) {
    const stoppedBy = run.turn.stoppedBy;
    if (!stoppedBy || !wf.isCancellation(error) || wf.CancellationScope.current().consideredCancelled)
      throw error;
    run.state.appendAssistantNote(`⏹️ Stopped by @${stoppedBy}.`);
  } finally {
    run.turn = undefined;
  }
}

/** The model loop of one turn; `resume` picks up a step whose gates were open across continue-as-new. */
export async function continueTurn(
  run: SessionRun,
  requesterId: string,
  resume?: { calls: ToolCall[] } & CarriedTurn,
): Promise<void> {
  const { state } = run;
  let step = resume?.step ?? 0;
  run.turnSpend = resume?.spend ?? newTurnSpend();
  /** Failing calls of this turn by (tool, arguments, error), to stop a loop on the same failure. */
  const failures = new Map<string, number>();
  /** Offered to this turn's first budget check only (then dropped, whether or not it was used). */
  let carriedGateId = carriedBudgetGateId(resume);
  try {
    // Resumed at a budget gate: the model call it waited before is next.
    if (resume && !resume.atBudgetGate) {
      await handleToolCalls(run, resume.calls, requesterId, step);
      step++;
    }
    while (!state.supersededTurn) {
      if (step >= run.settings.maxSteps) {
        state.appendAssistantNote(
          `I stopped after ${run.settings.maxSteps} steps (the step limit) without a final answer. Tell me how to continue.`,
        );
        run.runFailure = `stopped at the step limit (${run.settings.maxSteps} steps)`;
        break;
      }
      const waitAtBudget = async (gate: Gate) => {
        run.setStatus('waiting_approval', describeWaiting([gate]));
        await waitForGates(run, [gate], true);
        if (gate.status === 'pending')
          await handOverMidWait(run, { requesterId, step, atBudgetGate: true, budgetGateId: gate.id });
        run.setStatus('running');
      };
      const within = await withinBudget(run, requesterId, waitAtBudget, carriedGateId);
      carriedGateId = undefined;
      if (!within) break;
      const reply = await askModel(run, requesterId);
      if (!reply) break;
      await countUsage(run, requesterId, reply.usage);
      const calls = withDistinctIds(run, reply.toolCalls);
      state.append({
        role: 'assistant',
        id: wf.uuid4(),
        text: bounded(reply.text),
        toolCalls: calls,
        at: Date.now(),
        ...(reply.streamRef ? { streamRef: reply.streamRef } : {}),
      });
      if (calls.length === 0) break;
      await handleToolCalls(run, calls, requesterId, step);
      step++;
      const repeated = repeatedFailure(run, calls, failures);
      if (repeated) {
        state.appendAssistantNote(
          `I stopped: ${repeated.name} failed the same way ${MAX_IDENTICAL_ERRORS} times (${repeated.content.slice(0, 300)}). Tell me how to proceed.`,
        );
        run.runFailure = `${repeated.name} failed the same way ${MAX_IDENTICAL_ERRORS} times: ${repeated.content.slice(0, 200)}`;
        break;
      }
    }
  } catch (error) {
    const stoppedBy = run.turn?.stoppedBy;
    if (wf.isCancellation(error) && stoppedBy) closeStoppedTurn(run, stoppedBy);
    else if (wf.isCancellation(error))
      closeUnresolvedCalls(
        run,
        'cancelled',
        'cancelled: the session was cancelled before this call finished.',
      );
    throw error;
  } finally {
    if (!run.continuingAsNew) run.setStatus('idle');
  }
}

/** A stopped turn: its open gates close as stopped (their prompts say so) and every call gets its result. */
function closeStoppedTurn(run: SessionRun, by: string): void {
  const now = Date.now();
  const stopped: Gate[] = [];
  for (const gate of run.state.pendingGates()) {
    if (gate.remote || !stopGate(gate, by, now)) continue; // a mission run's gate belongs to the run
    stopped.push(gate);
    run.emit({ type: 'gate_resolved', gate, outcome: describeOutcome(gate) });
  }
  if (stopped.some((gate) => gate.kind === 'credential'))
    wf.upsertSearchAttributes([{ key: AgentCredentialWaits, value: [] }]);
  run.rememberOpenGates();
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

function repeatedFailure(run: SessionRun, calls: ToolCall[], failures: Map<string, number>) {
  for (const call of calls) {
    const result = run.state.transcript.find(
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
 * What the model is sent: the transcript within the context window, older messages replaced by a durable
 * summary (made here when the window moves on, recorded in history as the activity's result).
 */
async function modelTranscript(run: SessionRun, shrink: boolean, extraTools: unknown[]): Promise<Message[]> {
  const { state, settings } = run;
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

async function askModel(run: SessionRun, requesterId: string) {
  const { state } = run;
  /** While the model API is down: since when, and the next wait (doubling up to a ceiling). */
  let outageSince: number | undefined;
  let retryIn = MODEL_OUTAGE_FIRST_RETRY_MS;
  /** Set after the provider said the request was too long: the window is halved, once. */
  let shrink = false;
  /** Set once the worker did not hold a chunk the call named: every message goes whole, once. */
  let resent = false;
  for (;;) {
    try {
      await run.mcp.refresh(run.settings, requesterId);
      const extraTools = run.mcp.extraTools(run.settings);
      const { transcript: chunked, links } = run.transcriptChunks.requestOf(
        await modelTranscript(run, shrink, extraTools),
      );
      const answer = extraTools.length
        ? await callModel({ chunked, extraTools })
        : await callModel({ chunked });
      run.transcriptChunks.stored(links, answer.lastLink);
      if (outageSince !== undefined) {
        state.notify('The model is answering again.');
        run.setStatus('running');
      }
      return answer;
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
      if (!shrink && failureType(error) === FailureType.ContextTooLong) {
        shrink = true;
        continue;
      }
      if (!resent && failureType(error) === TRANSCRIPT_CHUNKS_MISSING) {
        resent = true;
        run.transcriptChunks.forget();
        continue;
      }
      // An outage (not a refusal like a bad key) keeps the turn waiting, up to modelOutageTimeout.
      const budget = run.settings.modelOutageTimeoutMs ?? DEFAULT_MODEL_OUTAGE_TIMEOUT_MS;
      if (isModelOutage(error) && Date.now() - (outageSince ?? Date.now()) < budget) {
        if (outageSince === undefined) {
          outageSince = Date.now();
          state.notify(
            `The model is unavailable (${failureMessage(error)}); retrying since ${clock(outageSince)}. Your message is kept and will be answered when it is back.`,
          );
          run.setStatus('running', `model unavailable, retrying since ${clock(outageSince)}`);
        }
        await wf.sleep(retryIn);
        retryIn = Math.min(retryIn * 2, MODEL_OUTAGE_MAX_RETRY_MS);
        continue;
      }
      state.appendAssistantNote(`⚠️ I could not get an answer from the model: ${failureMessage(error)}`);
      run.runFailure = `the model failed: ${failureMessage(error)}`;
      if (outageSince !== undefined) run.setStatus('running');
      return undefined;
    }
  }
}

/** Whether the conversation the model sees holds a tool result that content from outside could have written. */
function readOutsideContent(transcript: readonly Message[]): boolean {
  return transcript.some((m) => m.role === 'tool' && !m.synthetic && !resultIsOwnText(m.name));
}

/**
 * One model step's tool calls in three phases: validate and ask the policy for each; open every
 * approval of the step at once (so people see all prompts together) and wait for all; then run the
 * approved calls in the model's order. Every call ends with exactly one result.
 */
async function handleToolCalls(
  run: SessionRun,
  calls: ToolCall[],
  requesterId: string,
  step: number,
): Promise<void> {
  const { state, settings } = run;
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
    const resolved = sessionTool(call.name, { mcpTools: run.mcp.tools, mcpServers: settings.mcpServers });
    if (resolved.kind === 'mcp_refresh') {
      // Only looks: nothing runs on a server, so no approval.
      const discovery = await run.mcp.refresh(settings, requesterId, true);
      state.appendToolResult(call, 'ok', run.mcp.describe(settings, discovery!));
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
      run.rememberOpenGates();
      run.emit({ type: 'gate', gate, reason: 'opened' });
      approved.push({ call, tool, args: checked.args, gate });
      continue;
    }
    let plan: Awaited<ReturnType<typeof planToolCall>>;
    try {
      plan = await planToolCall({
        toolName: tool.name,
        args: checked.args,
        userId: requesterId,
        sessionId: run.sessionId,
        sessionGrants: state.grants,
        // What the model read may be steering it: a mission run's goal and trigger, or tool results it can see.
        ...(run.runOf
          ? { untrusted: 'mission-run' }
          : step > 0 || readOutsideContent(state.transcript)
            ? { untrusted: 'tool-results' }
            : {}),
      });
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
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
      run.rememberOpenGates();
      run.emit({ type: 'gate', gate, reason: 'opened' });
    }
    approved.push({ call, tool, args: checked.args, ...(gate ? { gate } : {}) });
  }

  const gates = approved.flatMap((entry) => (entry.gate ? [entry.gate] : []));
  if (gates.length) {
    run.setStatus(
      gates.some((g) => g.kind === 'approval') ? 'waiting_approval' : 'waiting_answer',
      describeWaiting(gates),
    );
    // Long waits can outgrow the history: continue as new mid-wait, carrying the open gates and this turn.
    await waitForGates(run, gates, true);
    if (gates.some((gate) => gate.status === 'pending')) await handOverMidWait(run, { requesterId, step });
    run.setStatus('running');
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
      if (resolution.grant.scope === 'user') await saveGrant(run, resolution.grant, entry.tool.name);
      else state.grants.push(resolution.grant);
    }
    await execute(run, call, entry.tool.name, args, preface, requesterId);
  }
}

/**
 * Stores a personal "always" grant. A write the user directory refuses (or that fails after its retries)
 * is told; the call it came with still runs, since it was approved.
 */
async function saveGrant(run: SessionRun, grant: Grant, toolName: string): Promise<void> {
  try {
    await saveUserGrant(grant);
  } catch (error) {
    if (wf.isCancellation(error)) throw error;
    run.state.appendAssistantNote(
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
  run: SessionRun,
  call: ToolCall,
  toolName: string,
  args: Record<string, unknown>,
  preface: string,
  userId: string,
): Promise<void> {
  const { state, settings, sessionId } = run;
  // Models and proxies reuse tool call ids: the key is the workflow's own id for this call.
  const idempotencyKey = `${sessionId}:${wf.uuid4()}`;
  const tool = sessionTool(toolName, { mcpTools: run.mcp.tools, mcpServers: settings.mcpServers });
  const sideEffects = toolEffect(tool, args) === 'side-effects';
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
    if (result.status === 'ok' && toolName.endsWith('__connect')) run.mcp.forget();
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
    run.emit({ type: 'gate', gate, reason: 'opened' });
    run.setStatus('waiting_credential', describeWaiting([gate]));
    // Only this person's own sign-in resumes the call: a shared mission's run acts as its owner, never as
    // whoever signs in to the provider next.
    wf.upsertSearchAttributes([
      { key: AgentCredentialWaits, value: [credentialWaitValue(userId, gate.provider)] },
    ]);
    await waitForGates(run, [gate], false);
    wf.upsertSearchAttributes([{ key: AgentCredentialWaits, value: [] }]);
    run.setStatus('running');
    const unrun = resultWithoutRun(gate);
    if (unrun) return state.appendToolResult(call, unrun.status, unrun.content);
  }
}

/** The reply's calls with ids no earlier call, gate or other call of the reply has (call-ids.ts). */
function withDistinctIds(run: SessionRun, calls: ToolCall[]): ToolCall[] {
  if (!calls.length) return calls;
  const known = new Set([...run.state.gates.values()].map((gate) => gate.toolCallId));
  for (const message of run.state.transcript)
    if (message.role === 'assistant') for (const call of message.toolCalls) known.add(call.id);
  const distinct = distinctCallIds(calls, known);
  return distinct.same ? calls : distinct.calls;
}

/** Continues as new in the middle of a wait, carrying the open gates and this turn; the next run resumes it. */
async function handOverMidWait(run: SessionRun, turn: CarriedTurn): Promise<never> {
  run.continuingAsNew = true;
  await wf.condition(() => run.readyToHandOver());
  const spent = run.turnSpend.spend.calls ? { spend: run.turnSpend } : {};
  const carried = run.carry();
  // Only the carried gates: the list stays as small as what it refers to.
  const told = carried.gates
    .filter((gate) => run.toldGates.has(gate.id) || run.toldBefore.has(gate.id))
    .map((gate) => gate.id);
  return await continueOnCurrentVersion<typeof sessionWorkflow>({
    ...run.input,
    carried: { ...carried, turn: { ...turn, ...spent, ...(told.length ? { told } : {}) } },
  });
}

function closeUnresolvedCalls(run: SessionRun, status: ToolResultStatus, content: string): void {
  for (const call of unresolvedToolCalls(run.state.transcript))
    run.state.appendToolResult(call, status, content);
  for (const gate of run.state.pendingApprovals()) cancelGate(gate, Date.now());
}
