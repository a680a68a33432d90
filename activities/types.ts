/** Shapes that cross the workflow/activity boundary (workflows import these as types only). */
import type { Grant } from '../common/grants';
import type { Policy } from '../common/tools/definitions';
import type { Message, ToolCall } from '../workflows/session/contract';

export interface ModelRequest {
  transcript: Message[];
  /** MCP tools discovered for this session, as the model sees them. */
  extraTools?: { name: string; description: string; parameters: Record<string, unknown> }[];
}

export interface ModelReply {
  text: string;
  toolCalls: ToolCall[];
}

export interface ToolPlanRequest {
  toolName: string;
  args: Record<string, unknown>;
  userId: string;
  sessionId: string;
  sessionGrants: Grant[];
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
}

export interface ToolRunRequest {
  toolName: string;
  args: Record<string, unknown>;
  /** Workflow id + tool call id: a retried or repeated run returns the first run's result. */
  idempotencyKey: string;
  sessionId: string;
  /** Whose credentials the tool uses (absent in histories recorded before credentials existed). */
  userId?: string;
}

export interface ToolRunResult {
  /** `credential_required`: nothing ran; the person must connect `credential.provider` first. */
  status: 'ok' | 'error' | 'credential_required';
  content: string;
  credential?: {
    provider: string;
    providerName: string;
    kind: 'oauth2' | 'api_key';
    /** Why the person is asked (again), for the prompt: e.g. their stored sign-in could not be read. */
    note?: string;
  };
}

export type { SessionSettings } from '../workflows/session/settings';
