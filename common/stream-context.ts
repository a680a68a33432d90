/**
 * What a streamed message may show besides the text (#22): who asked (Slack's streaming messages in a channel
 * are addressed to one person) and the tool steps this turn took before the answer (Slack's plan display).
 * Read from the transcript the model call gets, so nothing extra travels through workflow history.
 */
import type { Message, ToolResultStatus } from '../workflows/session/contract';

export interface StreamStep {
  id: string;
  title: string;
  status: 'complete' | 'error' | 'in_progress';
  /** Why a step did not complete: its result's status (denied, expired, failed…). */
  details?: string;
}

export interface StreamContext {
  /** The person whose message started this turn (a platform user id). */
  requester?: string;
  steps: StreamStep[];
}

/** Steps shown at most: a plan is a summary, and a long turn's earlier steps are in the thread anyway. */
const MAX_STEPS = 20;

export function streamContextOf(transcript: Message[]): StreamContext {
  let start = transcript.length;
  while (start > 0 && transcript[start - 1]!.role !== 'user') start--;
  const requester = start > 0 ? (transcript[start - 1] as { userId: string }).userId : undefined;
  const results = new Map<string, ToolResultStatus>();
  for (const message of transcript.slice(start))
    if (message.role === 'tool') results.set(message.toolCallId, message.status);
  const steps: StreamStep[] = [];
  for (const message of transcript.slice(start)) {
    if (message.role !== 'assistant') continue;
    for (const call of message.toolCalls) {
      const status = results.get(call.id);
      steps.push({
        id: call.id.slice(0, 64),
        title: call.name.slice(0, 64),
        status: status === undefined ? 'in_progress' : status === 'ok' ? 'complete' : 'error',
        ...(status !== undefined && status !== 'ok' ? { details: status } : {}),
      });
    }
  }
  return { ...(requester ? { requester } : {}), steps: steps.slice(-MAX_STEPS) };
}
