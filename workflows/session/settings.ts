import type { Message } from './contract';
import type { Budgets } from '../../common/budgets';

/** Per-turn settings the worker's configuration supplies to a session (`loadRunOpening`, `loadSettings`). */
export interface SessionSettings {
  maxSteps: number;
  /** Absent in histories recorded before it existed; the workflow then uses its built-in limit. */
  continueAsNewAfterEvents?: number;
  /** Who besides the asker may answer questions and decide approvals. */
  approvers?: string[];
  /** The approvers' ids that are one person, to that person (common/identities.ts `asPeople`). */
  people?: Record<string, string>;
  questionTimeoutMs?: number | 'never';
  /** Chat platforms: post an open gate again after this long. */
  reminderAfterMs?: number;
  /** How long a "Connect <provider>" prompt waits for the sign-in. */
  credentialTimeoutMs?: number | 'never';
  /** Configured MCP servers (absent when none): the session discovers their tools. */
  mcpServers?: string[];
  /** How long a turn waits for a model API that is down before it gives up (absent: 6 hours). */
  modelOutageTimeoutMs?: number;
  /** Discover MCP tools again after this long (sooner while a server is down). */
  mcpRefreshAfterMs?: number | 'never';
  /** The model's context window in tokens (absent: DEFAULT_CONTEXT_TOKENS). */
  contextTokens?: number;
  /** Tokens every model request spends on the system prompt and the built-in tool definitions (an estimate). */
  requestOverheadTokens?: number;
  /** The policy's spending limits (absent when none is set). */
  budgets?: Budgets;
  /** The optional search attributes the namespace has (absent: unknown, so none is set). */
  optionalSearchAttributes?: string[];
  /** Gates are e-mailed to the people who may decide them (SMTP_URL is set; absent: no mail). */
  email?: boolean;
}

/**
 * What a run without a carried transcript reads before its first turn, in one activity: the transcript of the
 * session's last closed run (empty when none) and the settings. `settings` is absent when they could not be
 * read; the turn then reads them itself (and says so if that fails too).
 */
export interface RunOpening {
  previousTranscript: Message[];
  settings?: SessionSettings;
}
