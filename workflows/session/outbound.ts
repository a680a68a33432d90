/**
 * What a session tells a chat platform (Slack, Discord): the workflow queues these in an outbox and a
 * delivery loop hands them to the `deliver` activity, in order. The web chat reads state instead, so web
 * sessions queue nothing.
 */
import type { Gate } from './contract';

export type OutboundEvent =
  /** Agent text for the conversation (answers, notes). */
  | {
      type: 'message';
      text: string;
      /** The transcript message's id, for feedback on it (absent on messages queued before it existed). */
      id?: string;
      /** The turn's final answer (not a note or an intermediate step's text): offered feedback buttons. */
      answer?: boolean;
      /** The platform message the text was streamed into while written: its first part replaces it. */
      replaces?: string;
    }
  /** Post a gate's prompt with buttons; the platform's message reference is recorded on the gate. */
  | { type: 'gate'; gate: Gate; reason: 'opened' | 'repost' | 'reminder' }
  /** Edit every posted prompt of a still open gate to show its progress (approvals so far); buttons stay. */
  | { type: 'gate_updated'; gate: Gate }
  /** Edit every posted prompt of a decided gate to show its outcome. */
  | { type: 'gate_resolved'; gate: Gate; outcome: string }
  /** A notice for one person (ephemeral where the platform has it) or for everyone. */
  | { type: 'notice'; text: string; to?: string }
  /** A visible "working" sign on the message that started the turn. */
  /** The turn started (on) or ended (off); `to`, the requester, is offered a Stop button where a platform can. */
  | { type: 'working'; on: boolean; ref: string; to?: string };

export interface DeliveryRequest {
  sessionId: string;
  event: OutboundEvent;
}

/**
 * A long answer goes out in several posts. `from` is how many an earlier attempt of the same delivery already
 * posted (the retry goes on from there, never posting a part twice); `onPosted` records each part as it lands.
 */
export interface PartProgress {
  from: number;
  onPosted(parts: number): void;
  /**
   * The same for every attempt of one delivery: platforms that deduplicate posts by a client-chosen key
   * (Discord's `nonce`) get no second copy when a worker dies between the post and recording it.
   */
  key?: string;
}

export const FROM_FIRST_PART: PartProgress = { from: 0, onPosted: () => {} };

export interface DeliveryResult {
  /** The platform's reference of a posted message (Slack `ts`), for later edits. */
  ref?: string;
}
