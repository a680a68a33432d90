/**
 * Fork and retry (issue 54): a new conversation seeded with a transcript up to a message. Pure, shared by the web
 * API and `agentctl`.
 *
 * The cut is pair-safe: a fork "through" an assistant message that called tools takes its results with it, and a
 * fork through one result takes its siblings; a call with no stored result at the fork point (still waiting at a
 * gate, or running) is left out, so the new conversation holds no call it would have to run or repair. Results are
 * carried as data: nothing before the cut runs again. Ratings and stream references belong to the original's
 * messages and are dropped. A retry cuts just before an answer, so the new conversation's first turn writes it
 * again (with another model, if asked).
 */
import type { ForkMode, Message } from '../workflows/session/contract';

export type { ForkMode, ForkOrigin } from '../workflows/session/contract';

export type ForkCut =
  | { ok: true; messages: Message[]; original?: { text: string; model?: string } }
  | { ok: false; error: string };

/** The side-by-side view shows this much of the original answer. */
const ORIGINAL_TEXT_CHARS = 8_000;

export function forkTranscript(transcript: readonly Message[], messageId: string, mode: ForkMode): ForkCut {
  const at = transcript.findIndex((m) => m.id === messageId);
  if (at < 0) return { ok: false, error: `no message ${messageId} in this conversation` };
  const message = transcript[at]!;
  if (mode === 'retry') {
    if (message.role !== 'assistant' || message.synthetic)
      return { ok: false, error: 'only an answer of the agent can be retried; fork from other messages' };
    if (message.toolCalls.length)
      return {
        ok: false,
        error:
          'this message called tools: retrying it would run them again. Fork from it instead (its results are kept), or retry the answer after them',
      };
    const messages = pairSafe(transcript.slice(0, at), transcript);
    // A retry needs something to answer: the request ends with the person's message or a step's results.
    while (messages.length && messages.at(-1)!.role === 'assistant') messages.pop();
    if (!messages.some((m) => m.role === 'user'))
      return { ok: false, error: 'there is no message of a person before this answer to answer again' };
    return {
      ok: true,
      messages,
      original: {
        text: message.text.slice(0, ORIGINAL_TEXT_CHARS),
        ...(message.model ? { model: message.model } : {}),
      },
    };
  }
  return {
    ok: true,
    messages: pairSafe(transcript.slice(0, throughResults(transcript, at) + 1), transcript),
  };
}

/** The index the cut ends at: past the results of the step `at` belongs to, so no call is cut from its result. */
function throughResults(transcript: readonly Message[], at: number): number {
  let callsAt = at;
  // A result belongs to the nearest assistant message before it that made calls.
  if (transcript[at]!.role === 'tool') while (callsAt > 0 && transcript[callsAt]!.role === 'tool') callsAt--;
  const step = transcript[callsAt]!;
  if (step.role !== 'assistant' || !step.toolCalls.length) return at;
  const ids = new Set(step.toolCalls.map((call) => call.id));
  let end = at;
  for (let i = callsAt + 1; i < transcript.length; i++) {
    const m = transcript[i]!;
    if (m.role !== 'tool') break;
    if (ids.has(m.toolCallId)) end = Math.max(end, i);
  }
  return end;
}

/**
 * The prefix with every call paired: results stored after the cut (an interrupted call answered later) are brought
 * in as data; calls with no result anywhere are left out, and results of calls outside the prefix dropped.
 */
function pairSafe(prefix: readonly Message[], whole: readonly Message[]): Message[] {
  const inPrefix = new Set(
    prefix.filter((m) => m.role === 'tool').map((m) => (m as { toolCallId: string }).toolCallId),
  );
  const later = new Map<string, Message>();
  for (const m of whole.slice(prefix.length))
    if (m.role === 'tool' && !inPrefix.has(m.toolCallId) && !later.has(m.toolCallId))
      later.set(m.toolCallId, m);
  const out: Message[] = [];
  const calls = new Set<string>();
  for (const m of prefix) {
    if (m.role === 'tool') {
      if (calls.has(m.toolCallId)) out.push(m);
      continue;
    }
    if (m.role === 'user') {
      out.push(m);
      continue;
    }
    const answered = m.toolCalls.filter((call) => inPrefix.has(call.id) || later.has(call.id));
    const { feedback: _feedback, streamRef: _streamRef, ...copy } = m;
    if (!answered.length && !m.text.trim() && m.toolCalls.length) continue;
    out.push(answered.length === m.toolCalls.length ? copy : { ...copy, toolCalls: answered });
    for (const call of answered) {
      calls.add(call.id);
      const moved = later.get(call.id);
      if (moved) out.push(moved);
    }
  }
  return out;
}
