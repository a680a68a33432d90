/**
 * Transcript repair, run whenever a session starts from an existing transcript (an import, a new run after
 * a terminated one). Append-only: earlier rows are never changed or dropped; idempotent: a repaired
 * transcript is healthy, so a second pass changes nothing; it never runs a tool.
 *   1. tail tool calls without a result get one synthetic error result each (they may not have run);
 *   2. a user turn that no assistant message answers gets one assistant recovery marker — judged on the
 *      transcript as it was, since the results appended in step 1 answer calls, not the user.
 */
import type { Message, ToolCall } from './contract';

export interface RepairReport {
  /** Tool call ids that received a synthetic result. */
  interruptedCalls: string[];
  /** Whether an orphan user turn got a recovery marker. */
  recoveredUserTurn: boolean;
}

export interface RepairOptions {
  /** Calls still being decided (open gates carried across continue-as-new) are live, not interrupted. */
  liveCallIds?: ReadonlySet<string>;
  /**
   * The user turn is still being answered (a turn carried across continue-as-new at a budget gate, before its
   * first model call): it is not an orphan, even with no call live.
   */
  userTurnIsLive?: boolean;
}

export const INTERRUPTED_RESULT =
  'interrupted: this call was cut off before it finished, so it was not (or may not have been) executed. It was not run again.';
export const RECOVERY_MARKER =
  'I was interrupted before I could answer the message above. Please send it again if you still need an answer.';

export function repairTranscript(
  transcript: readonly Message[],
  now: number,
  newId: () => string,
  options: RepairOptions = {},
): { transcript: Message[]; report: RepairReport } {
  const { liveCallIds = new Set<string>(), userTurnIsLive = false } = options;
  const repaired = [...transcript];
  const missing = unansweredTailCalls(repaired).filter((call) => !liveCallIds.has(call.id));
  const orphanBefore = hasUnansweredUserTurn(transcript, liveCallIds.size > 0);
  for (const call of missing) {
    repaired.push({
      role: 'tool',
      id: newId(),
      toolCallId: call.id,
      name: call.name,
      status: 'error',
      content: INTERRUPTED_RESULT,
      at: now,
      synthetic: true,
    });
  }
  const orphan = !userTurnIsLive && (orphanBefore || repaired.at(-1)?.role === 'user');
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

/**
 * The last user message has no assistant message after it: nobody answered it. Tool results behind it
 * (an interrupted call's, real or synthetic) do not answer a person. While calls are live the turn is
 * still in progress, so nothing is orphaned.
 */
function hasUnansweredUserTurn(transcript: readonly Message[], turnIsLive: boolean): boolean {
  if (turnIsLive) return false;
  const lastUser = transcript.findLastIndex((m) => m.role === 'user');
  return lastUser >= 0 && !transcript.slice(lastUser + 1).some((m) => m.role === 'assistant');
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
