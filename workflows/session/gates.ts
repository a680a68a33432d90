/**
 * The gate state machine as pure functions: how a gate opens, what a decision does, every transition of its status
 * (only here), and what the model and a refused clicker are told. Who may decide is common/gates/deciders.ts, and
 * the words every channel shows (outcomes, rule lines, waiting lines, hints) are common/gates/words.ts. The
 * workflow wires these to signals and timers and never writes a gate's status itself.
 */
import { exactPattern } from '../../common/glob';
import { elicitContent } from '../../common/tools/elicitation';
import {
  parseTextAnswer,
  validateAnswers,
  type Answer,
  type AskUserResult,
  type Question,
} from '../../common/tools/ask-user';
import type { ArgsCheck } from '../../common/tools/definitions';
import { approvalRules, isProtected, mayApprove, mayDecide, samePerson } from '../../common/gates/deciders';
import {
  approvalProgress,
  clock,
  decidersLine,
  alreadyDecided,
  decidedThing,
  decidersList,
  isBudgetGate,
} from '../../common/gates/words';
import type {
  AnswerSubmission,
  Approval,
  ApprovalGate,
  CredentialGate,
  Decided,
  Decision,
  Gate,
  GateResolution,
  GateStatus,
  QuestionGate,
  ToolResultStatus,
} from './contract';
import type { DecisionSurface } from '../../common/chat-ids';

export function openApprovalGate(input: {
  id: string;
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  subject: string;
  requesterId: string;
  approvers: readonly string[];
  now: number;
  timeoutMs: number | 'never';
  /** Policy `selfApprove` (default true) and `approvals` (default 1) of this tool. */
  selfApprove?: boolean;
  approvalsNeeded?: number;
  /** Policy `escalate` of this tool. */
  escalate?: { afterMs: number; to: string[] };
  /** Ids that are one person (ToolPlan `people`). */
  people?: Record<string, string>;
}): ApprovalGate {
  return {
    id: input.id,
    kind: 'approval',
    toolCallId: input.toolCallId,
    toolName: input.toolName,
    args: input.args,
    subject: input.subject,
    requesterId: input.requesterId,
    approvers: [...new Set(input.approvers)],
    ...(input.people && Object.keys(input.people).length ? { people: input.people } : {}),
    createdAt: input.now,
    expiresAt: input.timeoutMs === 'never' ? null : input.now + input.timeoutMs,
    status: 'pending',
    approvalsNeeded: input.approvalsNeeded ?? 1,
    selfApprove: input.selfApprove ?? true,
    approvals: [],
    ...(input.escalate
      ? { escalation: { at: input.now + input.escalate.afterMs, to: input.escalate.to } }
      : {}),
  };
}

/**
 * Escalation due: an approval still undecided at its escalation time is put to the people named, who may decide
 * from then on. Returns the notice that says so (once), or undefined when nothing is due.
 */
export function escalate(gate: Gate, now: number): string | undefined {
  if (gate.kind !== 'approval' || gate.status !== 'pending') return undefined;
  const escalation = gate.escalation;
  if (!escalation || escalation.done || now < escalation.at) return undefined;
  escalation.done = true;
  const added = escalation.to.filter((id) => !mayDecide(gate, id));
  gate.approvers = [...gate.approvers, ...added];
  const waited = Math.max(1, Math.round((escalation.at - gate.createdAt) / 60_000));
  return added.length
    ? `Nobody decided this ${decidedThing(gate)} within ${waited} min: ${added.map((id) => `@${id}`).join(', ')} ${added.length === 1 ? 'is' : 'are'} asked too.`
    : undefined;
}

export function openQuestionGate(input: {
  id: string;
  toolCallId: string;
  /** ask_user's, or the tool whose server asks (MCP elicitation). */
  toolName?: string;
  questions: Question[];
  requesterId: string;
  approvers: readonly string[];
  now: number;
  timeoutMs: number | 'never';
  asks?: QuestionGate['asks'];
  /** Ids that are one person (settings `people`). */
  people?: Record<string, string>;
}): QuestionGate {
  return {
    id: input.id,
    kind: 'question',
    toolCallId: input.toolCallId,
    toolName: input.toolName ?? 'ask_user',
    questions: input.questions,
    requesterId: input.requesterId,
    approvers: [...new Set(input.approvers)],
    ...(input.people && Object.keys(input.people).length ? { people: input.people } : {}),
    createdAt: input.now,
    expiresAt: input.timeoutMs === 'never' ? null : input.now + input.timeoutMs,
    status: 'pending',
    ...(input.asks ? { asks: input.asks } : {}),
  };
}

export function openCredentialGate(input: {
  id: string;
  toolCallId: string;
  toolName: string;
  provider: string;
  providerName: string;
  credentialKind: 'oauth2' | 'api_key';
  requesterId: string;
  now: number;
  timeoutMs: number | 'never';
  /** Why the account is needed again (a stored sign-in that could not be read), shown with the prompt. */
  note?: string | undefined;
}): CredentialGate {
  return {
    id: input.id,
    kind: 'credential',
    toolCallId: input.toolCallId,
    toolName: input.toolName,
    provider: input.provider,
    providerName: input.providerName,
    credentialKind: input.credentialKind,
    requesterId: input.requesterId,
    // Nobody can sign in on someone else's behalf.
    approvers: [],
    createdAt: input.now,
    expiresAt: input.timeoutMs === 'never' ? null : input.now + input.timeoutMs,
    status: 'pending',
    ...(input.note ? { note: input.note.slice(0, 500) } : {}),
  };
}

export type DecisionCheck = { ok: true; resolution: GateResolution } | { ok: false; notice: string };

/**
 * A decision on an approval gate: it resolves the gate (with the approvals so far), or counts one more
 * approval of a call that needs several (the gate stays open and the approver is told), or is refused.
 */
export type ApprovalCheck =
  | { ok: true; resolution: GateResolution; approvals: Approval[] }
  | { ok: true; resolution?: undefined; approvals: Approval[]; notice: string; delegateTo?: string }
  | { ok: false; notice: string };

/**
 * Checks a decision against a gate. A refusal changes nothing and explains itself to the clicker: unknown
 * gate, already decided, not allowed (four-eyes: the requester may deny but not approve), a second approval
 * by the same person, allow-always on a call it must not skip, or edited arguments that fail the tool's schema.
 *
 * An operator (`agentctl resolve`) may decide any approval and counts as one distinct approver,
 * `operator:<name>`, never as the requester: a quorum of two still needs someone else (or a second operator).
 */
/** Where it was decided, when the gateway told it (recorded on the approval and the resolution for the audit). */
const viaOf = (decided: { via?: DecisionSurface }) => (decided.via ? { via: decided.via } : {});

export function evaluateDecision(input: {
  gate: Gate | undefined;
  decision: Decided<Decision>;
  now: number;
  checkArgs: (args: unknown) => ArgsCheck;
  newGrantId: () => string;
  sessionId: string;
}): ApprovalCheck {
  const { now } = input;
  const decision = input.decision.operator
    ? { ...input.decision, userId: `operator:${input.decision.userId}` }
    : input.decision;
  const open = openApprovalFor(input.gate, decision, now);
  if ('ok' in open) return open;
  const { gate } = open;
  const { needed, approvals } = approvalRules(gate);
  const base = { by: decision.userId, at: now, ...viaOf(decision) };
  if (decision.choice === 'delegate') return delegation(gate, decision, approvals);
  if (decision.choice === 'deny')
    return {
      ok: true,
      approvals,
      resolution: { ...base, outcome: 'denied', ...(decision.reason ? { reason: decision.reason } : {}) },
    };
  const handedTo = (gate.delegations ?? [])
    .filter((d) => samePerson(gate, d.by, decision.userId))
    .map((d) => `@${d.to}`);
  if (!decision.operator && handedTo.length)
    return {
      ok: false,
      notice: `You handed this ${decidedThing(gate)} to ${handedTo.join(', ')}, so their approval counts, not yours. You can still deny it. Nothing changed.`,
    };
  if (!decision.operator && !mayApprove(gate, decision.userId))
    return {
      ok: false,
      notice: `${isBudgetGate(gate) ? 'You reached this budget' : `You asked for this ${gate.toolName} call`}, so someone else must approve it (self-approval is off). ${decidersLine(gate)} You can still deny it. Nothing changed.`,
    };
  if ((decision.choice === 'always' || decision.choice === 'edit') && isBudgetGate(gate))
    return {
      ok: false,
      notice: 'A budget can only be continued (approve) or stopped (deny). Nothing changed.',
    };
  if (decision.choice === 'always' && isProtected(gate))
    return {
      ok: false,
      notice: `Always allow is not available for this ${gate.toolName} call: it needs ${needed > 1 ? `${needed} approvals from different people` : 'approval by someone other than who asked'}, which a standing grant would skip. Approve this call instead. Nothing changed.`,
    };
  if (decision.choice === 'edit' && needed > 1)
    return {
      ok: false,
      notice: `Edit & approve is not available for this ${gate.toolName} call: it needs ${needed} approvals of the same arguments. Deny it with the correction as the reason instead. Nothing changed.`,
    };
  const earlier = approvals.find((a) => samePerson(gate, a.by, decision.userId));
  if (earlier)
    return {
      ok: false,
      notice: `You already approved this ${gate.toolName} call at ${clock(earlier.at)}; it needs ${needed} approvals from different people (${approvalProgress(gate)}). Nothing changed.`,
    };
  let args: Record<string, unknown> | undefined;
  if (decision.choice === 'edit') {
    if (!decision.args)
      return { ok: false, notice: 'Edit & approve needs the corrected arguments. Nothing changed.' };
    const checked = input.checkArgs(decision.args);
    if (!checked.ok)
      return {
        ok: false,
        notice: `The edited arguments were refused (${checked.error}). The approval is still open.`,
      };
    args = checked.args;
  }
  const counted = [...approvals, { by: decision.userId, at: now, ...viaOf(decision) }];
  if (counted.length < needed) {
    const progress = approvalProgress({ ...gate, approvals: counted });
    const more = needed - counted.length;
    return {
      ok: true,
      approvals: counted,
      notice: `Your approval of this ${gate.toolName} call is counted: ${progress}. It runs after ${more} more approval${more === 1 ? '' : 's'} from someone else.`,
    };
  }
  switch (decision.choice) {
    case 'approve':
      return { ok: true, approvals: counted, resolution: { ...base, outcome: 'approved' } };
    case 'edit':
      return { ok: true, approvals: counted, resolution: { ...base, outcome: 'edited', args: args! } };
    case 'always': {
      const scope = decision.scope ?? 'session';
      const grant = {
        id: input.newGrantId(),
        userId: gate.requesterId,
        toolName: gate.toolName,
        scope,
        createdAt: now,
        // What the person saw, never a bare tool grant: the pattern they wrote, else exactly this call (a grant for
        // every call of a tool is made only in the policy file).
        pattern: decision.pattern?.trim() || exactPattern(gate.subject),
        ...(scope === 'session' ? { sessionId: input.sessionId } : {}),
      };
      return { ok: true, approvals: counted, resolution: { ...base, outcome: 'always', grant } };
    }
  }
}

/**
 * "Hand this to another approver": a decision like any other (recorded, told to everyone), which adds the person
 * to those who may decide. Their approval then counts like any approver's, quorum and four-eyes included.
 */
/**
 * The pending approval this person may decide; otherwise the answer to their click (not an approval, already
 * decided, not theirs to decide), or a tool server's question they decline.
 */
function openApprovalFor(
  gate: Gate | undefined,
  decision: Decided<Decision>,
  now: number,
): { gate: ApprovalGate } | ApprovalCheck {
  if (!gate) return { ok: false, notice: 'That approval is not part of this conversation (unknown gate).' };
  if (gate.kind === 'credential')
    return {
      ok: false,
      notice: `That is a sign-in, not an approval: use its Connect ${gate.providerName} button. Nothing changed.`,
    };
  // A tool server's question may be declined (the server is told, and decides what its call does then).
  if (gate.kind === 'question' && gate.asks && decision.choice === 'deny')
    return declineServerQuestion(gate, decision, now);
  if (gate.kind !== 'approval')
    return {
      ok: false,
      notice: 'That is a question, not an approval: answer it with its form. Nothing changed.',
    };
  if (gate.status !== 'pending')
    return {
      ok: false,
      notice: `${alreadyDecided(gate)} Nothing changed.`,
    };
  if (!decision.operator && !mayDecide(gate, decision.userId))
    return {
      ok: false,
      notice: `You may not decide on this ${decidedThing(gate)}: only ${decidersList(gate)} may. Nothing changed.`,
    };
  return { gate };
}

function declineServerQuestion(gate: QuestionGate, decision: Decided<Decision>, now: number): ApprovalCheck {
  if (gate.status !== 'pending') return { ok: false, notice: `${alreadyDecided(gate)} Nothing changed.` };
  if (!mayDecide(gate, decision.userId))
    return {
      ok: false,
      notice: `You may not answer this question: only ${decidersList(gate)} may. Nothing changed.`,
    };
  const reason = decision.reason ? { reason: decision.reason } : {};
  return {
    ok: true,
    approvals: [],
    resolution: { by: decision.userId, at: now, ...viaOf(decision), outcome: 'denied', ...reason },
  };
}

function delegation(gate: ApprovalGate, decision: Decision, approvals: Approval[]): ApprovalCheck {
  const to = decision.to?.trim();
  if (!to) return { ok: false, notice: 'Hand it to whom? Name the person. Nothing changed.' };
  if (samePerson(gate, to, decision.userId))
    return { ok: false, notice: 'You cannot hand a decision to yourself. Nothing changed.' };
  // Only an approval one holds can be handed over, and only before using it: four-eyes and quorum stay whole.
  if (!mayApprove(gate, decision.userId))
    return {
      ok: false,
      notice: `You may not approve this ${decidedThing(gate)}, so you cannot hand its approval to someone else. ${decidersLine(gate)} Nothing changed.`,
    };
  if (approvals.some((a) => samePerson(gate, a.by, decision.userId)))
    return {
      ok: false,
      notice: `You already approved this ${decidedThing(gate)}; your approval counts and cannot be handed over too. Nothing changed.`,
    };
  // By any of their ids: someone who may decide already gains nothing from a hand-over but a second vote.
  if (mayDecide(gate, to) || gate.approvers.some((id) => samePerson(gate, id, to)))
    return { ok: false, notice: `@${to} may already decide on this ${decidedThing(gate)}. Nothing changed.` };
  return {
    ok: true,
    approvals,
    delegateTo: to,
    notice: `@${decision.userId} handed this ${decidedThing(gate)} to @${to}, who may decide it now in their place.`,
  };
}

export interface UnrunResult {
  status: ToolResultStatus;
  content: string;
}

/** Checks a submitted form against a question gate; a refusal explains itself and the question stays open. */
export function evaluateAnswer(
  gate: Gate | undefined,
  submission: Decided<AnswerSubmission>,
  now: number,
): DecisionCheck {
  if (!gate) return { ok: false, notice: 'That question is not part of this conversation (unknown gate).' };
  if (gate.kind !== 'question')
    return { ok: false, notice: 'That is an approval, not a question. Nothing changed.' };
  if (gate.status !== 'pending') return { ok: false, notice: `${alreadyDecided(gate)} Nothing changed.` };
  if (!mayDecide(gate, submission.userId)) {
    return {
      ok: false,
      notice: `You may not answer this question: only ${decidersList(gate)} may. Nothing changed.`,
    };
  }
  const checked = validateAnswers(gate.questions, submission.answers);
  // A tool server's question: each answer must also be what its schema wants (a number, an email address, …).
  const typed = checked.ok && gate.asks ? elicitContent(gate.asks.fields, checked.answers) : undefined;
  const refusal = !checked.ok ? checked.error : typed && !typed.ok ? typed.error : undefined;
  if (refusal !== undefined || !checked.ok)
    return {
      ok: false,
      notice: `Your answers were not accepted: ${refusal}. The question is still open.`,
    };
  return {
    ok: true,
    resolution: {
      outcome: 'answered',
      by: submission.userId,
      at: now,
      ...viaOf(submission),
      answers: checked.answers,
    },
  };
}

/**
 * A person's drafts with newer answers replacing older ones to the same question. Only answers to the gate's
 * own questions are kept, so a draft is bounded by the questions (at most five) whatever a signal carries.
 */
export function mergeDraft(
  questions: readonly Question[],
  drafts: readonly Answer[],
  answers: readonly Answer[],
): Answer[] {
  const byQuestion = new Map(drafts.map((a) => [a.question, a]));
  for (const answer of answers)
    if (questions.some((q) => q.label === answer.question)) byQuestion.set(answer.question, answer);
  return [...byQuestion.values()];
}

/** Typed answers (by question index) read like text replies; free text counts as "other" where allowed. */
export function readTypedAnswers(
  questions: readonly Question[],
  texts: readonly { index: number; text: string }[],
): { ok: true; answers: Answer[] } | { ok: false; error: string } {
  const answers: Answer[] = [];
  for (const { index, text } of texts) {
    const question = questions[index];
    if (!question) return { ok: false, error: `There is no question number ${index + 1}.` };
    const answer =
      parseTextAnswer(question, text) ??
      (question.allow_custom ? { question: question.label, selected: [], custom: text } : undefined);
    if (!answer) {
      const choices = question.options.map((o, i) => `${i + 1}. ${o.label}`).join(', ');
      return {
        ok: false,
        error: `“${text}” is not an answer to "${question.label}": pick one of ${choices}.`,
      };
    }
    answers.push(answer);
  }
  return { ok: true, answers };
}

/** The structured AskUserResult the model gets for an answered question. */
export function answeredResult(gate: QuestionGate): string {
  const r = gate.resolution!;
  const result: AskUserResult = {
    answers: r.answers ?? [],
    answered_by: r.by,
    answered_at: new Date(r.at).toISOString(),
  };
  return JSON.stringify(result);
}

/** The tool result the model gets when a gate ends without running the tool (or, for a question, without answers). */
export function resultWithoutRun(gate: Gate): UnrunResult | undefined {
  const r = gate.resolution;
  if (!r) return undefined;
  if (gate.kind === 'credential' && r.outcome === 'expired') {
    return {
      status: 'expired',
      content: `not run: ${gate.providerName} was not connected in time. The user can connect it and ask again.`,
    };
  }
  if (gate.kind === 'question' && r.outcome === 'expired') {
    return {
      status: 'expired',
      content: 'no answer: nobody answered in time. Continue without the answers, or ask again later.',
    };
  }
  switch (r.outcome) {
    case 'denied':
      return {
        status: 'denied',
        content: `denied by @${r.by}${r.reason ? `: ${r.reason}` : ' (no reason given)'}. The tool was not run.`,
      };
    case 'expired':
      return { status: 'expired', content: 'expired: nobody decided in time. The tool was not run.' };
    case 'superseded':
      return { status: 'superseded', content: 'not run: superseded by a new message from the user.' };
    case 'stopped':
      return { status: 'cancelled', content: `not run: @${r.by} stopped the turn.` };
    case 'cancelled':
      return {
        status: 'cancelled',
        content: 'cancelled: the session was cancelled before anyone decided. The tool was not run.',
      };
    default:
      return undefined;
  }
}

/** Replies typed to one gate that it keeps to show (a flood is not kept whole). */
const MAX_TYPED_REPLIES = 10;
const MAX_TYPED_REPLY_CHARS = 500;

/** A reply typed to this gate, kept with it so the page shows what the person typed where they typed it. */
export function keepTypedReply(gate: Gate, message: { userId: string; text: string }, now: number): void {
  const typed = (gate.typed ??= []);
  if (typed.length >= MAX_TYPED_REPLIES) return;
  const text =
    message.text.length > MAX_TYPED_REPLY_CHARS
      ? `${message.text.slice(0, MAX_TYPED_REPLY_CHARS)}…`
      : message.text;
  typed.push({ by: message.userId, text, at: now });
}

/** Typed replies in a conversation: "approve", or "deny" with an optional reason. */
export function parseTypedDecision(
  text: string,
): { choice: 'approve' | 'deny'; reason?: string } | undefined {
  const match = /^\s*(approve|approved|deny|denied)\b[\s:,.-]*([\s\S]*)$/i.exec(text);
  if (!match) return undefined;
  const choice = match[1]!.toLowerCase().startsWith('approve') ? 'approve' : 'deny';
  const reason = match[2]!.trim();
  if (choice === 'approve') return reason ? undefined : { choice };
  return reason ? { choice, reason } : { choice };
}

// ---- Transitions: a gate leaves `pending` once, through one of these, and never changes after. ----

function settle(gate: Gate, status: Exclude<GateStatus, 'pending'>, resolution: GateResolution): boolean {
  if (gate.status !== 'pending') return false;
  gate.status = status;
  gate.resolution = resolution;
  return true;
}

/** A decision or an answer that evaluateDecision / evaluateAnswer accepted. */
export function resolveGate(gate: Gate, resolution: GateResolution): boolean {
  return settle(gate, 'resolved', resolution);
}

/** The person signed in: the tool runs now (with their credential, or the signer's for a shared mission). */
export function connectGate(gate: CredentialGate, by: string, now: number): boolean {
  return settle(gate, 'resolved', { outcome: 'connected', by, at: now });
}

export function expireGate(gate: Gate, now: number): boolean {
  return settle(gate, 'expired', { outcome: 'expired', by: 'system', at: now });
}

/** The requester sent a new message instead of deciding: the turn ends and the message goes next. */
export function supersedeGate(gate: Gate, by: string, now: number): boolean {
  return settle(gate, 'cancelled', { outcome: 'superseded', by, at: now });
}

/** Someone stopped the turn (Stop, or `stop` typed) while the gate was open. */
export function stopGate(gate: Gate, by: string, now: number): boolean {
  return settle(gate, 'cancelled', { outcome: 'stopped', by, at: now });
}

/** The session (or the mission run) was cancelled while the gate was open. */
export function cancelGate(gate: Gate, now: number): boolean {
  return settle(gate, 'cancelled', { outcome: 'cancelled', by: 'system', at: now });
}

/** A mission run's gate shown in its owner's conversation ends the way the run reports it ended. */
export function mirrorRemoteGate(proxy: Gate, reported: Gate): boolean {
  if (reported.status === 'pending') return false;
  if (proxy.status !== 'pending') return false;
  proxy.status = reported.status;
  if (reported.resolution) proxy.resolution = reported.resolution;
  return true;
}
