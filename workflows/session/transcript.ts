/** Transcript rules as pure functions: bounded content and "every tool call gets exactly one result". */
import type { Message, ToolCall } from './contract';

/** Tool output and model text are bounded so no payload nears Temporal's per-payload limits. */
export const MAX_CONTENT_CHARS = 16_000;

/** A tool call's arguments, as JSON, beyond this are not kept: the call gets an error result instead. */
export const MAX_TOOL_ARGS_CHARS = 16_000;

export function bounded(text: string, max = MAX_CONTENT_CHARS): string {
  if (text.length <= max) return text;
  const omitted = text.length - max;
  return `${text.slice(0, max)}\n…[truncated: ${omitted} more characters not shown]`;
}

/** Tool calls of the last assistant message that have no result yet, in order. */
export function unresolvedToolCalls(transcript: readonly Message[]): ToolCall[] {
  let lastAssistant = -1;
  for (let i = transcript.length - 1; i >= 0; i--) {
    if (transcript[i]!.role === 'assistant') {
      lastAssistant = i;
      break;
    }
  }
  if (lastAssistant < 0) return [];
  const message = transcript[lastAssistant];
  if (message?.role !== 'assistant') return [];
  const answered = new Set(
    transcript.slice(lastAssistant + 1).flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])),
  );
  return message.toolCalls.filter((call) => !answered.has(call.id));
}

export function hasResult(transcript: readonly Message[], toolCallId: string): boolean {
  return transcript.some((m) => m.role === 'tool' && m.toolCallId === toolCallId);
}
