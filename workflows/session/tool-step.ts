/**
 * One model step's tool calls in three phases: vet each (validate, ask the policy); open every gate of the step
 * at once (so people see all prompts together) and wait for all (long waits continue as new mid-wait, carrying
 * the open gates and this turn); then run the approved calls in the model's order. Every call ends with exactly
 * one result.
 */
import * as wf from '@temporalio/workflow';
import { AgentCredentialWaits, credentialWaitValue } from '../../common/search-attributes';
import type { Grant } from '../../common/grants';
import type { ToolDefinition } from '../../common/tools/definitions';
import { describeReply, MAX_ELICIT_ROUNDS, type ElicitReply } from '../../common/tools/elicitation';
import { checkCall, sessionTool, toolEffect } from '../../common/tools/registry';
import type { Gate, ToolCall } from './contract';
import {
  answeredResult,
  openApprovalGate,
  openCredentialGate,
  openQuestionGate,
  resultWithoutRun,
} from './gates';
import { approvalRules } from '../../common/gates/deciders';
import { waitAt } from './gate-wait';
import { credentialedReads, othersWrote, readOutsideContent } from './model-step';
import {
  failureMessage,
  planToolCall,
  runRepeatableTool,
  runTool,
  saveUserGrant,
} from './session-activities';
import type { Session, TurnInProgress } from './session';
import { askServersQuestion } from './server-questions';
import { runWithSideEffects } from './tool-runs';
import { hasResult, MAX_TOOL_ARGS_CHARS } from './transcript';

const DEFAULT_QUESTION_TIMEOUT_MS = 24 * 3_600_000;

/** A call that passed its checks: what runs (and the gate it waits at, if any). */
interface Vetted {
  call: ToolCall;
  tool: ToolDefinition;
  args: Record<string, unknown>;
  gate?: Gate;
}

export async function playToolStep(run: Session, turn: TurnInProgress, calls: ToolCall[]): Promise<void> {
  const approved: Vetted[] = [];
  for (const call of calls) {
    const vetted = await vet(run, turn, call);
    if (vetted) approved.push(vetted);
  }
  const gates = approved.flatMap((entry) => (entry.gate ? [entry.gate] : []));
  // Long waits can outgrow the history: continue as new mid-wait, carrying the open gates and this turn.
  if (gates.length) await waitAt(run, gates, { handOver: () => turn.carry() });
  for (const entry of approved) await runApproved(run, turn, entry);
}

/**
 * A call's checks in order; one that fails them gets its result here, and nothing runs. Some checks wait (a
 * server's tool list read again, the policy's word).
 */
async function vet(run: Session, turn: TurnInProgress, call: ToolCall): Promise<Vetted | undefined> {
  const { state, settings } = run;
  if (hasResult(state.transcript, call.id)) return undefined;
  if (call.argsTooLarge) {
    state.appendToolResult(
      call,
      'error',
      `not run: the arguments were ${call.argsTooLarge.toLocaleString('en-US')} characters long; the limit is ${MAX_TOOL_ARGS_CHARS.toLocaleString('en-US')}. Pass large content in smaller parts.`,
    );
    return undefined;
  }
  const resolved = sessionTool(call.name, { mcpTools: run.mcp.tools, mcpServers: settings.mcpServers });
  if (resolved.kind === 'mcp_refresh') {
    // Only looks: nothing runs on a server, so no approval.
    const discovery = await run.mcp.refresh(settings, turn.requesterId, true);
    state.appendToolResult(call, 'ok', run.mcp.describe(settings, discovery!));
    return undefined;
  }
  if (resolved.kind === 'unknown') {
    state.appendToolResult(call, 'error', resolved.error);
    return undefined;
  }
  const checked = checkCall(resolved, call.args);
  if (!checked.ok) {
    state.appendToolResult(call, 'error', checked.error);
    return undefined;
  }
  const tool = checked.definition;
  const existing = state.gateForCall(call.id);
  if (existing) {
    // Resumed after continue-as-new: the gate (and any decision on it) carried over.
    const args = existing.kind === 'approval' ? existing.args : checked.args;
    return { call, tool, args, gate: existing };
  }
  if (checked.kind === 'question') {
    // ask_user only asks: it becomes a question gate whatever the policy says, and never runs as an activity.
    const gate = openQuestionGate({
      id: wf.uuid4(),
      toolCallId: call.id,
      questions: checked.args.questions,
      requesterId: turn.requesterId,
      approvers: settings.approvers ?? [],
      now: Date.now(),
      timeoutMs: settings.questionTimeoutMs ?? DEFAULT_QUESTION_TIMEOUT_MS,
      ...(settings.people ? { people: settings.people } : {}),
    });
    run.gates.open(gate);
    return { call, tool, args: checked.args, gate };
  }
  return withPolicy(run, turn, { call, tool, args: checked.args });
}

/** The providers whose credentials read what the model now sees, when there are any (the planner's exfiltration guard). */
function credentialedContext(transcript: Parameters<typeof credentialedReads>[0]): {
  credentialedReads?: string[];
} {
  const providers = credentialedReads(transcript);
  return providers.length ? { credentialedReads: providers } : {};
}

/** The policy's word on a call: denied (its result says why), run at once, or gated by an approval. */
async function withPolicy(run: Session, turn: TurnInProgress, entry: Vetted): Promise<Vetted | undefined> {
  const { call, tool, args } = entry;
  const { state } = run;
  let plan: Awaited<ReturnType<typeof planToolCall>>;
  try {
    plan = await planToolCall({
      toolName: tool.name,
      args,
      userId: turn.requesterId,
      sessionId: run.sessionId,
      sessionGrants: state.grants,
      ...credentialedContext(state.transcript),
      // What the model read may be steering it: a mission run's goal and trigger, others' messages in a shared
      // thread, or tool results it can see.
      ...(run.runOf
        ? { untrusted: 'mission-run' }
        : othersWrote(state.transcript, turn.requesterId)
          ? { untrusted: 'shared-thread' }
          : turn.step > 0 || readOutsideContent(state.transcript)
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
    return undefined;
  }
  if (plan.decision === 'deny') {
    state.appendToolResult(call, 'denied', `denied by policy: ${plan.reason}. The tool was not run.`);
    return undefined;
  }
  if (plan.decision !== 'ask') return entry;
  const gate = openApprovalGate({
    id: wf.uuid4(),
    toolCallId: call.id,
    toolName: tool.name,
    args,
    subject: tool.subject(args),
    requesterId: turn.requesterId,
    approvers: plan.approvers,
    now: Date.now(),
    timeoutMs: plan.timeoutMs,
    // Absent from plans recorded before four-eyes and quorum: one approval, self-approval allowed.
    ...(plan.selfApprove === undefined ? {} : { selfApprove: plan.selfApprove }),
    ...(plan.approvals === undefined ? {} : { approvalsNeeded: plan.approvals }),
    ...(plan.escalate ? { escalate: plan.escalate } : {}),
    ...(plan.people ? { people: plan.people } : {}),
  });
  run.gates.open(gate);
  return { ...entry, gate };
}

/** A vetted call after its gate: its result without running (denied, answered, superseded), or its run. */
async function runApproved(run: Session, turn: TurnInProgress, entry: Vetted): Promise<void> {
  const { state } = run;
  const { call, gate } = entry;
  const unrun = gate ? resultWithoutRun(gate) : undefined;
  if (unrun) return state.appendToolResult(call, unrun.status, unrun.content);
  if (gate?.kind === 'question') return state.appendToolResult(call, 'ok', answeredResult(gate));
  if (state.supersededTurn)
    return state.appendToolResult(call, 'superseded', 'not run: superseded by a new message from the user.');
  let args = entry.args;
  let preface = '';
  const resolution = gate?.resolution;
  if (resolution?.outcome === 'edited' && resolution.args) {
    args = resolution.args;
    preface = `Note: @${resolution.by} edited the arguments before approving; it ran with ${JSON.stringify(args)}.\n`;
  }
  if (resolution?.outcome === 'always' && resolution.grant) {
    if (resolution.grant.scope === 'user') await saveGrant(run, resolution.grant, entry.tool.name);
    else state.addGrant(resolution.grant);
  }
  // A call others had to approve (four-eyes, a quorum) is not completed by what its server then asks the requester
  // alone: the approvers never saw those answers. Its server's questions are declined.
  const approvedByOthers =
    gate?.kind === 'approval' && (approvalRules(gate).needed > 1 || !approvalRules(gate).selfApprove);
  await execute(run, call, entry.tool.name, args, preface, turn.requesterId, approvedByOthers);
}

/**
 * Stores a personal "always" grant. A write the user directory refuses (or that fails after its retries)
 * is told; the call it came with still runs, since it was approved.
 */
async function saveGrant(run: Session, grant: Grant, toolName: string): Promise<void> {
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
  run: Session,
  call: ToolCall,
  toolName: string,
  args: Record<string, unknown>,
  preface: string,
  userId: string,
  /** Decline what the tool's server asks instead of asking the person (see runApproved). */
  declineQuestions = false,
): Promise<void> {
  const { state, settings, sessionId } = run;
  // Models and proxies reuse tool call ids: the key is the workflow's own id for this call.
  const idempotencyKey = `${sessionId}:${wf.uuid4()}`;
  const tool = sessionTool(toolName, { mcpTools: run.mcp.tools, mcpServers: settings.mcpServers });
  const effect = toolEffect(tool, args);
  /** Replies to what the tool's server asked in earlier rounds of this call, and who gave them. */
  const inputs: ElicitReply[] = [];
  const answeredBy: string[] = [];
  for (let signIns = 1; ;) {
    let result;
    try {
      const request = {
        toolName,
        args,
        idempotencyKey,
        sessionId,
        userId,
        ...(inputs.length ? { inputs } : {}),
      };
      result =
        effect === 'side-effects'
          ? await runWithSideEffects(request)
          : effect === 'repeatable'
            ? await runRepeatableTool(request)
            : await runTool(request);
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
      return state.appendToolResult(call, 'failed', `failed: ${failureMessage(error)}`);
    }
    // Connecting a tool server makes its real tools appear: discover again before the next model call.
    if (result.status === 'ok' && toolName.endsWith('__connect')) run.mcp.forget();
    if (result.status === 'input_required' && result.input) {
      // The server asks the person first: the call is made again with the answer (or ended without one).
      if (inputs.length >= MAX_ELICIT_ROUNDS)
        return state.appendToolResult(
          call,
          'error',
          `not completed: the server kept asking (${MAX_ELICIT_ROUNDS} questions in one call).`,
        );
      if (declineQuestions) {
        inputs.push({ digest: result.input.digest, action: 'decline' });
        answeredBy.push(
          `the server's question was declined: this call was approved by others, and only @${userId} would have answered it`,
        );
        continue;
      }
      const asked = await askServersQuestion(run, call, toolName, result.input, userId);
      if ('result' in asked) return state.appendToolResult(call, asked.result.status, asked.result.content);
      inputs.push(asked.reply);
      answeredBy.push(describeReply(asked.reply, asked.by));
      continue;
    }
    if (result.status !== 'credential_required' || !result.credential) {
      const answered = answeredBy.length ? `(${answeredBy.join('; ')})\n` : '';
      return state.appendToolResult(
        call,
        result.status === 'ok' ? 'ok' : 'error',
        preface + answered + result.content,
      );
    }
    if (signIns++ > 2) return state.appendToolResult(call, 'error', `not run: ${result.content}`);
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
      note: result.credential.note,
    });
    await waitForSignIn(run, gate, userId);
    const unrun = resultWithoutRun(gate);
    if (unrun) return state.appendToolResult(call, unrun.status, unrun.content);
  }
}

/** Waits at a credential gate until this person signs in, or the gate ends. */
async function waitForSignIn(
  run: Session,
  gate: Extract<Gate, { kind: 'credential' }>,
  userId: string,
): Promise<void> {
  run.gates.open(gate);
  // Only this person's own sign-in resumes the call: a shared mission's run acts as its owner, never as
  // whoever signs in to the provider next.
  await waitAt(run, [gate], {
    during: {
      start: () =>
        wf.upsertSearchAttributes([
          { key: AgentCredentialWaits, value: [credentialWaitValue(userId, gate.provider)] },
        ]),
      end: () => wf.upsertSearchAttributes([{ key: AgentCredentialWaits, value: [] }]),
    },
  });
}
