/** The session's in-memory state (rebuilt by replay), with the small invariants kept in one place. */
import {
  addUsage,
  continuedFrom,
  NO_SPEND,
  type Continued,
  type ModelUsage,
  type Spend,
} from '../../common/budgets';
import type { Grant } from '../../common/grants';
import type { SessionStatus } from '../../common/search-attributes';
import type {
  ApprovalGate,
  CarriedState,
  Gate,
  Message,
  Notice,
  QuestionGate,
  SessionInput,
  SessionView,
  ToolCall,
  ToolResultStatus,
  UserMessage,
} from './contract';
import { bounded, hasResult } from './transcript';

const MAX_NOTICES = 30;
const MAX_REMEMBERED_GATES = 200;
/**
 * Messages waiting for the running turn: a count and a size, so 200 pasted logs cannot make the carried state
 * (one payload, at most 2 MB) or the history outgrow Temporal's limits. A message over the limit is refused
 * with a notice to its sender, never dropped silently.
 */
export const MAX_QUEUED_MESSAGES = 20;
export const MAX_QUEUED_CHARS = 200_000;
/** The transcript a run carries into the next: older messages beyond this stay in the earlier run's history. */
export const MAX_CARRIED_TRANSCRIPT_CHARS = 1_000_000;

export class SessionState {
  transcript: Message[];
  gates: Map<string, Gate>;
  grants: Grant[];
  inbox: UserMessage[];
  /**
   * Messages that arrived and wait for their gateway seal's check (seal-check.ts): counted as queued, so nobody
   * reads "idle, nothing queued" in between. The session run tells how many.
   */
  arriving: () => number = () => 0;
  notices: Notice[];
  status: SessionStatus = 'idle';
  version = 0;
  /** Model usage of the conversation (a mission run: of the run), and budget allowances approved for it. */
  usage: Spend;
  /** The same, by the model that answered (`provider:model`; calls before models were recorded are not in it). */
  usageByModel: Record<string, Spend>;
  /** Set once a conversation (or mission run) budget gate was approved: the limit counts from there. */
  budgetContinuedAt: Continued | undefined;
  /** Set when the requester's new message cancelled an open approval: the turn ends and the message goes next. */
  supersededTurn = false;

  /** Called for every agent text and notice, so chat platforms can be told (the web chat reads state). */
  listener:
    | {
        /** `answer`: a model's final text (no tool calls, not the runtime's note). */
        assistantText(text: string, id: string, answer: boolean, streamRef?: string): void;
        notice(notice: Notice): void;
      }
    | undefined;

  constructor(
    private readonly input: SessionInput,
    private readonly now: () => number,
    private readonly newId: () => string,
  ) {
    const carried = input.carried;
    this.transcript = [...(carried?.transcript ?? [])];
    this.gates = new Map((carried?.gates ?? []).map((gate) => [gate.id, gate]));
    this.grants = [...(carried?.grants ?? [])];
    this.inbox = [...(carried?.inbox ?? [])];
    this.notices = [...(carried?.notices ?? [])];
    this.usage = carried?.usage ?? NO_SPEND;
    this.usageByModel = { ...(carried?.usageByModel ?? {}) };
    this.budgetContinuedAt = carried?.budgetContinuedAt;
  }

  touch(): void {
    this.version++;
  }

  /** A new turn starts: a superseded one is behind it. */
  beginTurn(): void {
    this.supersededTurn = false;
  }

  addGate(gate: Gate): void {
    this.gates.set(gate.id, gate);
  }

  addGrant(grant: Grant): void {
    this.grants.push(grant);
  }

  /** A model call's usage, added to the conversation's (a mission run's) spend. */
  /**
   * A provider's retry-after the turn waits out (model-step.ts), and who asked to try the models now instead
   * (tryModelNow); absent while no such wait runs.
   */
  modelWait: { until: number; requesterId: string; tryNowBy?: string } | undefined;

  addUsage(usage: ModelUsage, model?: string): void {
    this.usage = addUsage(this.usage, usage);
    if (model) this.usageByModel[model] = addUsage(this.usageByModel[model] ?? NO_SPEND, usage);
    this.touch();
  }

  /** The conversation's budget gate was approved: its limit counts from what is spent now. */
  continueBudget(): void {
    this.budgetContinuedAt = continuedFrom(this.usage);
  }

  append(message: Message): void {
    this.transcript.push(message);
    this.touch();
    // A stopped answer is already in its chat message (marked there): posting it again would say it twice.
    if (message.role === 'assistant' && message.text.trim() && !message.stopped)
      this.listener?.assistantText(
        message.text,
        message.id,
        !message.synthetic && message.toolCalls.length === 0,
        message.streamRef,
      );
  }

  /** Exactly one result per tool call: a second result for the same id is dropped. */
  appendToolResult(call: ToolCall, status: ToolResultStatus, content: string): void {
    if (hasResult(this.transcript, call.id)) return;
    this.append({
      role: 'tool',
      id: this.newId(),
      toolCallId: call.id,
      name: call.name,
      status,
      content: bounded(content),
      at: this.now(),
    });
  }

  appendAssistantNote(text: string): void {
    this.append({
      role: 'assistant',
      id: this.newId(),
      text,
      toolCalls: [],
      at: this.now(),
      synthetic: true,
    });
  }

  /** A summary stands in for older messages in model requests; people see it as a note, chat platforms are not sent it. */
  appendSummary(text: string, throughId: string): void {
    this.transcript.push({
      role: 'assistant',
      id: this.newId(),
      text,
      toolCalls: [],
      at: this.now(),
      synthetic: true,
      summary: { throughId },
    });
    this.touch();
  }

  /** `about`: the gate a refused (or counted) decision or answer was on, for a client that waits for its verdict. */
  notify(text: string, to?: string, gateId?: string, about?: string): void {
    const notice = {
      id: this.newId(),
      text,
      at: this.now(),
      ...(to ? { to } : {}),
      ...(gateId ? { gateId } : {}),
      ...(about ? { about } : {}),
    };
    this.notices.push(notice);
    this.listener?.notice(notice);
    if (this.notices.length > MAX_NOTICES) this.notices.splice(0, this.notices.length - MAX_NOTICES);
    this.touch();
  }

  enqueue(message: UserMessage): void {
    this.inbox.push(message);
    this.touch();
  }

  /** Why the inbox cannot take this message now, or undefined when it can. */
  inboxFull(message: UserMessage): string | undefined {
    if (this.inbox.length >= MAX_QUEUED_MESSAGES)
      return `${this.inbox.length} messages are already waiting (the limit is ${MAX_QUEUED_MESSAGES})`;
    const queued = this.inbox.reduce((sum, m) => sum + m.text.length, 0);
    if (queued + message.text.length > MAX_QUEUED_CHARS)
      return `the waiting messages already hold ${queued.toLocaleString('en-US')} characters (the limit is ${MAX_QUEUED_CHARS.toLocaleString('en-US')})`;
    return undefined;
  }

  seen(messageId: string): boolean {
    return (
      this.inbox.some((m) => m.messageId === messageId) ||
      this.transcript.some((m) => m.role === 'user' && m.id === messageId)
    );
  }

  gateForCall(toolCallId: string): Gate | undefined {
    return [...this.gates.values()].find((gate) => gate.toolCallId === toolCallId);
  }

  pendingGates(): Gate[] {
    return [...this.gates.values()].filter((gate) => gate.status === 'pending');
  }

  pendingApprovals(): ApprovalGate[] {
    return this.pendingGates().filter((gate): gate is ApprovalGate => gate.kind === 'approval');
  }

  pendingQuestions(): QuestionGate[] {
    return this.pendingGates().filter((gate): gate is QuestionGate => gate.kind === 'question');
  }

  /** The grant revoked, or undefined when this person has no such grant here. */
  revokeGrant(grantId: string, userId: string): Grant | undefined {
    const index = this.grants.findIndex((g) => g.id === grantId && g.userId === userId);
    if (index < 0) return undefined;
    const [revoked] = this.grants.splice(index, 1);
    this.touch();
    return revoked;
  }

  /** What continues into the next run: decided gates are kept (bounded) so old buttons still get a clear answer. */
  carry(options: { boundTranscript?: { previousRunId: string } } = {}): CarriedState {
    const gates = [...this.gates.values()].slice(-MAX_REMEMBERED_GATES);
    return {
      transcript: options.boundTranscript
        ? carriedTranscript(this.transcript, options.boundTranscript.previousRunId, this.newId)
        : this.transcript,
      grants: this.grants,
      inbox: this.inbox,
      notices: this.notices,
      gates,
      ...(this.usage.calls ? { usage: this.usage } : {}),
      ...(Object.keys(this.usageByModel).length ? { usageByModel: this.usageByModel } : {}),
      ...(this.budgetContinuedAt ? { budgetContinuedAt: this.budgetContinuedAt } : {}),
    };
  }

  view(sessionId: string): SessionView {
    return {
      sessionId,
      channel: this.input.channel,
      ownerId: this.input.ownerId,
      status: this.status,
      version: this.version,
      transcript: this.transcript,
      gates: [...this.gates.values()],
      grants: this.grants,
      notices: this.notices,
      queued: this.inbox.length + this.arriving(),
      usage: this.usage,
      ...(Object.keys(this.usageByModel).length ? { usageByModel: this.usageByModel } : {}),
      ...(this.input.fork ? { forkedFrom: this.input.fork } : {}),
      ...(this.modelWait
        ? { modelWait: { until: this.modelWait.until, requesterId: this.modelWait.requesterId } }
        : {}),
    };
  }
}

/**
 * The newest messages up to MAX_CARRIED_TRANSCRIPT_CHARS, starting at a user message (never between a tool call
 * and its result), the latest summary kept, and a note saying how many earlier ones stay in which run.
 */
export function carriedTranscript(
  transcript: Message[],
  previousRunId: string,
  newId: () => string,
): Message[] {
  const size = (m: Message) => JSON.stringify(m).length;
  let total = transcript.reduce((sum, m) => sum + size(m), 0);
  if (total <= MAX_CARRIED_TRANSCRIPT_CHARS) return transcript;
  let start = 0;
  for (let i = 0; i < transcript.length && total > MAX_CARRIED_TRANSCRIPT_CHARS; i++) {
    total -= size(transcript[i]!);
    if (transcript[i + 1]?.role === 'user') start = i + 1;
  }
  if (start === 0) return transcript;
  const summary = transcript.slice(0, start).findLast((m) => m.role === 'assistant' && m.summary);
  const note: Message = {
    role: 'assistant',
    id: newId(),
    text: `(${start} earlier messages of this conversation are kept in the history of run ${previousRunId}, not carried into this one.)`,
    toolCalls: [],
    at: transcript[start]!.at,
    synthetic: true,
  };
  return [...(summary ? [summary] : []), note, ...transcript.slice(start)];
}
