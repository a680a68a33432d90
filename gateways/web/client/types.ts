/** What the web API sends, as the page reads it (types only: nothing of the server's code runs here). */
import type { Gate, SessionView } from '../../../workflows/session/contract';

export type { Spend } from '../../../common/budgets';
export type { Grant } from '../../../common/grants';
export type { Answer, Question } from '../../../common/tools/ask-user';
export type {
  ApprovalGate,
  CredentialGate,
  Gate,
  GateOutcome,
  QuestionGate,
} from '../../../workflows/session/contract';
export type { InboxItem, InboxList, InboxOutcome } from '../inbox-types';

/** A gate as the web API sends it: the workflow's rule in words, and (for its person) a Connect link. */
export type WebGate = Gate & { rule?: string; connectUrl?: string };
export type WebView = Omit<SessionView, 'gates'> & { gates: WebGate[]; temporalUrl: string | null };
export type Message = WebView['transcript'][number];
export type ToolCall = Extract<Message, { role: 'assistant' }>['toolCalls'][number];
export type ToolResult = Extract<Message, { role: 'tool' }>;

export interface SessionSummary {
  sessionId: string;
  title?: string;
  ownerId?: string;
  status?: string;
  startTime: string;
  /** Archived by its owner: listed under "Archived". */
  archived?: boolean;
}

export interface Me {
  userId: string;
  mode: string;
  /** The scripted demo model answers, not a real one. */
  demoModel?: boolean;
  /** The deployment's models (`provider:model`, primary first): what a retry may use. */
  models?: string[];
}

/** The answer being written (streamed), and how long the transcript was when it began. */
export interface StreamedAnswer {
  streamId: string;
  text: string;
  done: boolean;
  base: number;
}
