/**
 * Transcript repair, run whenever a session starts from an existing transcript (an import, a new run after
 * a terminated one). Append-only: earlier rows are never changed or dropped; idempotent: a repaired
 * transcript is healthy, so a second pass changes nothing; it never runs a tool.
 *   1. tail tool calls without a result get one synthetic error result each (they may not have run);
 *   2. then an orphan user turn at the tail gets one assistant recovery marker.
 */
import type { Message, ToolCall } from './contract';

export interface RepairReport {
  /** Tool call ids that received a synthetic result. */
  interruptedCalls: string[];
  /** Whether an orphan user turn got a recovery marker. */
  recoveredUserTurn: boolean;
}

export const INTERRUPTED_RESULT =
  'interrupted: this call was cut off before it finished, so it was not (or may not have been) executed. It was not run again.';
export const RECOVERY_MARKER =
  'I was interrupted before I could answer the message above. Please send it again if you still need an answer.';

export function repairTranscript(
  transcript: readonly Message[],
  now: number,
  newId: () => string,
  /** Calls still being decided (open gates carried across continue-as-new) are live, not interrupted. */
  liveCallIds: ReadonlySet<string> = new Set(),
): { transcript: Message[]; report: RepairReport } {
  const repaired = [...transcript];
  const missing = unansweredTailCalls(repaired).filter((call) => !liveCallIds.has(call.id));
  for (const call of missing) {
    repaired.push({
      role: 'tool',
      id: newId(),
      toolCallId: call.id,
      name: call.name,
      status: 'error',
      content: INTERRUPTED_RESULT,
      at: now,
    });
  }
  const last = repaired.at(-1);
  const orphan = last?.role === 'user';
  if (orphan)
    repaired.push({
      role: 'assistant',
      id: newId(),
      text: RECOVERY_MARKER,
      toolCalls: [],
      at: now,
      synthetic: true,
    });
  return {
    transcript: repaired,
    report: { interruptedCalls: missing.map((c) => c.id), recoveredUserTurn: orphan },
  };
}

/** Tool calls of the last assistant message that made tool calls, with no result anywhere after it. */
function unansweredTailCalls(transcript: readonly Message[]): ToolCall[] {
  const index = transcript.findLastIndex((m) => m.role === 'assistant' && m.toolCalls.length > 0);
  const message = transcript[index];
  if (!message || message.role !== 'assistant') return [];
  const answered = new Set(
    transcript.slice(index + 1).flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])),
  );
  return message.toolCalls.filter((call) => !answered.has(call.id));
}
