/** Shapes that cross the workflow/activity boundary (workflows import these as types only). */
import type { ModelUsage } from '../common/budgets';
import type { Grant } from '../common/grants';
import type { Policy } from '../common/tools/definitions';
import type { Message, ToolCall } from '../workflows/session/contract';

import type { ChunkedTranscript } from '../common/transcript-chunks';

export interface ModelRequest {
  /** The messages whole (calls made before transcript chunks, and summaries). */
  transcript?: Message[];
  /** The messages by reference where the worker's store holds them (common/transcript-chunks.ts). */
  chunked?: ChunkedTranscript;
  /** MCP tools discovered for this session, as the model sees them. */
  extraTools?: { name: string; description: string; parameters: Record<string, unknown> }[];
  /** `provider:model` that must answer (a tool step goes on with the model that asked for it): no fallback. */
  model?: string;
}

export interface ModelReply {
  text: string;
  toolCalls: ToolCall[];
  /** What the call spent, from the provider's usage fields; absent when the provider reports none. */
  usage?: ModelUsage;
  /** Slack/Discord: the message the answer was streamed into while written (its final text replaces it). */
  streamRef?: string;
  /** For a chunked request: the last link the worker computed (the session checks it against its own). */
  lastLink?: string;
  /** `provider:model` that answered (the primary, or a fallback of MODEL_FALLBACKS). */
  model?: string;
}

export interface ToolPlanRequest {
  toolName: string;
  args: Record<string, unknown>;
  userId: string;
  sessionId: string;
  sessionGrants: Grant[];
  /**
   * Where content the model read may be steering this call: a mission run (its goal and trigger context), a
   * turn in which tool results already came back, or a shared thread where someone other than the requester wrote.
   * Mission tools that change something then ask by default; in a shared thread, so does a call made with the
   * requester's credential.
   */
  untrusted?: 'mission-run' | 'tool-results' | 'shared-thread';
  /**
   * Credential providers whose calls ran in this conversation: what they returned is in the model's context, so a
   * request to a host outside their `apiHosts` (or a command with the network) asks a person, whatever the policy.
   */
  credentialedReads?: string[];
}

export interface ToolPlan {
  decision: Policy;
  reason: string;
  approvers: string[];
  timeoutMs: number | 'never';
  /** false: the requester may not approve their own call (four-eyes). Absent in older histories: true. */
  selfApprove?: boolean;
  /** Distinct approvals the call needs (M of N). Absent in older histories: 1. */
  approvals?: number;
  /** Who else is asked once the approval has waited `afterMs` undecided (policy `escalate`). */
  escalate?: { afterMs: number; to: string[] };
  /**
   * One person, one vote: each id of a person listed in the policy's `users` (among the approvers and the requester)
   * to their name, so the gate counts a person once whatever channel they decide from. Absent: every id is a person.
   */
  people?: Record<string, string>;
}

/** The run contract is shared with workflow code, so it lives in a pure module. */
export type { ToolRunRequest, ToolRunResult } from '../common/tools/tool-run';

export type { RunOpening, SessionSettings } from '../workflows/session/settings';
