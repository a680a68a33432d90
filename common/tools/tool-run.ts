/** A tool run's request and result: the contract between the session workflow and the runTool activity. */
import type { ElicitAsk, ElicitReply } from './elicitation';

export interface ToolRunRequest {
  toolName: string;
  args: Record<string, unknown>;
  /** Workflow id + tool call id: a retried or repeated run returns the first run's result. */
  idempotencyKey: string;
  sessionId: string;
  /** Whose credentials the tool uses (absent in histories recorded before credentials existed). */
  userId?: string;
  /** Replies to what the tool's server asked in earlier rounds of this call (MCP elicitation), in order. */
  inputs?: ElicitReply[];
}

export interface ToolRunResult {
  /** `credential_required`: nothing ran; the person must connect `credential.provider` first. */
  status: 'ok' | 'error' | 'credential_required' | 'input_required';
  content: string;
  credential?: {
    provider: string;
    providerName: string;
    kind: 'oauth2' | 'api_key';
    /** Why the person is asked (again), for the prompt: e.g. their stored sign-in could not be read. */
    note?: string;
  };
  /** `input_required`: the call did not complete; its server asks the person this first (then it is made again). */
  input?: ElicitAsk;
}
