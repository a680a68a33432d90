/**
 * Writes the durable summary that stands in for older messages once a conversation outgrows the model's context
 * (workflows/session/context-window.ts). The model is asked through the same provider call as a turn, with the
 * older messages rendered as plain text; older text larger than one request is folded in chunks, each summary
 * carried into the next, so any length can be summarised.
 */
import type { Message } from '../../workflows/session/contract';
import type { CompleteFn } from './complete-fn';

export interface SummaryRequest {
  previousSummary?: string;
  messages: Message[];
  /** The model's context window (policy `contextTokens`), which bounds each request made here. */
  contextTokens: number;
  /** How long the summary may be. */
  maxSummaryTokens: number;
}

/** The scripted model recognises this opening, so summaries can be tested without a key. */
export const SUMMARY_INSTRUCTION = '[summarise]';

const TOOL_RESULT_CHARS = 2_000;

export async function summarizeConversation(
  complete: CompleteFn,
  request: SummaryRequest,
  signal?: AbortSignal,
): Promise<string> {
  // Half the window for the text to summarise: the rest holds the instruction, the tools and the answer.
  const chunkChars = Math.max(4_000, request.contextTokens * 2);
  let summary = request.previousSummary ?? '';
  for (const chunk of chunks(request.messages.map(renderLine), chunkChars)) {
    const prompt = [
      `${SUMMARY_INSTRUCTION} Summarise this conversation between people and an AI agent for the agent's own`,
      `memory, in at most ${request.maxSummaryTokens * 3} characters. Keep decisions, facts, names, numbers,`,
      'open tasks and what each person asked for; drop pleasantries. Answer with the summary only, no tool calls.',
      summary ? `\nThe summary so far:\n${summary}` : '',
      `\nThe messages to add:\n${chunk}`,
    ].join('\n');
    const reply = await complete(
      [{ role: 'user', id: 'summary-request', userId: 'runtime', text: prompt, at: 0 }],
      signal,
    );
    summary = (reply.text.trim() || summary).slice(0, request.maxSummaryTokens * 4);
  }
  return summary;
}

function renderLine(message: Message): string {
  switch (message.role) {
    case 'user':
      return `@${message.userId}: ${message.text}`;
    case 'assistant': {
      const calls = message.toolCalls.map((call) => `${call.name}(${JSON.stringify(call.args)})`);
      return `agent${message.synthetic ? ' (runtime note)' : ''}: ${message.text}${calls.length ? ` [calls ${calls.join(', ')}]` : ''}`;
    }
    case 'tool':
      return `${message.name} result (${message.status}): ${message.content.slice(0, TOOL_RESULT_CHARS)}`;
  }
}

function* chunks(lines: string[], maxChars: number): Generator<string> {
  let current: string[] = [];
  let size = 0;
  for (const line of lines) {
    const bounded = line.slice(0, maxChars);
    if (size + bounded.length > maxChars && current.length) {
      yield current.join('\n');
      current = [];
      size = 0;
    }
    current.push(bounded);
    size += bounded.length + 1;
  }
  if (current.length) yield current.join('\n');
}
