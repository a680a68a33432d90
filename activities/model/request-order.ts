/**
 * The transcript as a model request sees it. The stored transcript is append-only, so a result can sit
 * after a later user message (an interrupted call answered by repair) or be missing (an imported call that
 * was never answered). Chat Completions and Messages both want every call's results directly after the
 * assistant message that made it, so the request is built as a view: each call followed by its first result
 * (or an "interrupted" one if none was stored), results that answer no call left out, nothing else moved
 * except runtime notes ahead of the first user message, which are left out.
 */
import type { Message } from '../../workflows/session/contract';
import { INTERRUPTED_RESULT } from '../../workflows/session/repair';

type ToolMessage = Extract<Message, { role: 'tool' }>;

export function requestOrder(transcript: readonly Message[]): Message[] {
  const results = new Map<string, ToolMessage>();
  for (const message of transcript)
    if (message.role === 'tool' && !results.has(message.toolCallId)) results.set(message.toolCallId, message);
  const calls = new Set<string>();
  const view: Message[] = [];
  for (const message of transcript) {
    if (message.role === 'tool') continue;
    // A request opens with the person: runtime notes before the first user message (a failed load of the
    // earlier run) are for people, and the Messages API wants a user turn first.
    if (!view.length && message.role === 'assistant' && message.synthetic) continue;
    if (message.role === 'user') {
      view.push(message);
      continue;
    }
    // A call id used twice would be answered twice: the providers refuse both.
    const toolCalls = message.toolCalls.filter((call) => !calls.has(call.id));
    view.push(toolCalls.length === message.toolCalls.length ? message : { ...message, toolCalls });
    for (const call of toolCalls) {
      calls.add(call.id);
      view.push(
        results.get(call.id) ?? {
          role: 'tool',
          id: `missing-${call.id}`,
          toolCallId: call.id,
          name: call.name,
          status: 'error',
          content: INTERRUPTED_RESULT,
          at: message.at,
          synthetic: true,
        },
      );
    }
  }
  return view;
}
