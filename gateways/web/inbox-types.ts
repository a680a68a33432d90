/** What the "needs you" inbox sends (gateways/web/inbox.ts): types only, shared with the page. */
import type { Gate, SessionInput } from '../../workflows/session/contract';

export interface InboxItem {
  workflowId: string;
  channel: SessionInput['channel'];
  /** Where the decision was asked, in words: "web conversation …", "Slack thread", "mission nightly". */
  where: string;
  /** A web conversation's id, for the link that opens it. */
  sessionId?: string;
  gateId: string;
  kind: 'approval' | 'question' | 'credential' | 'budget';
  /** What it asks, in one line. */
  asks: string;
  toolName: string;
  args?: Record<string, unknown>;
  questions?: Extract<Gate, { kind: 'question' }>['questions'];
  /** Who asked: the person's name where the policy's users table knows their chat id. */
  requesterId: string;
  createdAt: number;
  expiresAt: number | null;
  /** The workflow's rule, as every prompt states it. */
  rule: string;
  /** Which of the person's ids the gate names (the decision is sent as it). */
  decideAs: string;
  /** Approve is offered (false: the person may only deny, e.g. their own call under four-eyes). */
  mayApprove: boolean;
  /** Edit & approve is offered: an approval this person may approve alone (no quorum; not a budget). */
  mayEdit: boolean;
}

export interface InboxList {
  /** This page's decisions, newest first. */
  items: InboxItem[];
  /** How many conversations and mission runs wait on the person, exactly (the page holds the newest of them). */
  total: number;
  /** The next page (`GET /api/inbox?cursor=`); absent on the last. */
  next?: string;
  /** Gates these conversations keep open beyond what their memo holds: decided in the conversation itself. */
  notShown: number;
  /** Conversations found waiting whose gates could not be read (a workflow of an older version, before it moved). */
  unreadable: number;
}

export type InboxOutcome =
  | { workflowId: string; gateId: string; ok: true }
  | { workflowId: string; gateId: string; ok: false; error: string };
