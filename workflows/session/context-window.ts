/**
 * The model's view of a conversation, built within a token budget (policy `contextTokens`). The stored
 * transcript keeps everything; each request carries the latest summary (if any), then as many recent messages
 * verbatim as fit, with long tool results shortened for the request only. The cut falls only before a user or
 * assistant message, never between a tool call and its results, so both providers accept every request.
 *
 * The current turn's request (the latest user message) is always sent verbatim, right after the summary: a long
 * turn of many tool steps can outgrow the window by itself, and then the cut falls inside the turn; the tool
 * steps before the cut are summarised, never the person's instruction, which the model would otherwise see only as
 * its own paraphrase. It is added on top of the verbatim tail (bounded by `PINNED_SHARE`), so when to summarise
 * and what is summarised are decided exactly as before, and running conversations replay unchanged.
 *
 * Token counts are an estimate (characters / 4 plus a per-message overhead): deterministic, dependency-free
 * and conservative for English and code; the budget leaves headroom for the error, and a provider that still
 * refuses the request as too long makes the turn summarise harder and try once more.
 */
import type { Message } from './contract';

type AssistantMessage = Extract<Message, { role: 'assistant' }>;

/** Used when the policy names no `contextTokens`: fits every current hosted model and most local ones. */
export const DEFAULT_CONTEXT_TOKENS = 32_000;
/** A window smaller than this cannot hold a system prompt, the tools and an answer. */
export const MIN_CONTEXT_TOKENS = 4_000;
const MESSAGE_OVERHEAD_TOKENS = 8;
/** Left for the answer and for the estimate's error. */
const RESERVED_SHARE = 0.25;
/** However large the tools are, a request carries at least this much conversation. */
const MIN_MESSAGE_TOKENS = 1_000;
/** Verbatim history may fill this share of what is left; a summary is made once it would not fit. */
const HIGH_WATER = 0.7;
/** After a summary, the verbatim tail is cut back to this share, so the next summary is a while away. */
const LOW_WATER = 0.45;
/** The summary itself is asked to stay under this share. */
export const SUMMARY_SHARE = 0.15;
const MIN_TOOL_RESULT_CHARS = 600;
/** The pinned request of the current turn may take this share of the messages' room; longer is shortened. */
const PINNED_SHARE = 0.2;

export function estimateTokens(message: Message): number {
  let chars: number;
  if (message.role === 'tool') chars = message.content.length + message.name.length;
  else if (message.role === 'user') chars = message.text.length;
  else
    chars =
      message.text.length +
      message.toolCalls.reduce(
        (sum, call) =>
          sum +
          call.name.length +
          (typeof call.args === 'string' ? call.args : JSON.stringify(call.args)).length,
        0,
      );
  return Math.ceil(chars / 4) + MESSAGE_OVERHEAD_TOKENS;
}

export function isSummary(
  message: Message,
): message is AssistantMessage & { summary: { throughId: string } } {
  return message.role === 'assistant' && message.summary !== undefined;
}

export interface ContextWindow {
  /** What the model is sent: the summary (as the opening user message) and the recent messages. */
  messages: Message[];
  /** Messages outside the window that no summary covers yet: summarise them (with `previousSummary`). */
  toSummarise: Message[];
  previousSummary: string | undefined;
  /** The id of the last message a new summary would cover. */
  summariseThroughId: string | undefined;
  estimatedTokens: number;
}

/**
 * `overheadTokens`: what every request carries besides the messages (the system prompt and the tool
 * definitions), measured by the worker; the rest of the window, less a share for the answer, is for messages.
 */
export function buildContextWindow(
  transcript: readonly Message[],
  contextTokens: number,
  overheadTokens = 0,
): ContextWindow {
  const budget = Math.max(MIN_CONTEXT_TOKENS, contextTokens);
  const available = Math.max(
    MIN_MESSAGE_TOKENS,
    Math.floor((budget - overheadTokens) * (1 - RESERVED_SHARE)),
  );
  const summaryAt = transcript.findLastIndex(isSummary);
  const summary = summaryAt >= 0 ? (transcript[summaryAt] as AssistantMessage) : undefined;
  const coveredThrough = summary ? transcript.findIndex((m) => m.id === summary.summary!.throughId) : -1;
  const live = transcript.slice(coveredThrough + 1).filter((m) => !isSummary(m));
  const toolCap = Math.max(MIN_TOOL_RESULT_CHARS, Math.floor((available * 4) / 8));
  const shortened = live.map((m) => shortenToolResult(m, toolCap));
  const costs = shortened.map(estimateTokens);
  const total = costs.reduce((a, b) => a + b, 0);
  const summaryTokens = summary ? estimateTokens(summary) : 0;

  // The current turn's request, when a summary already covers it (a long turn that has been summarised).
  const turnAt = transcript.findLastIndex((m) => m.role === 'user');
  const pinnedCap = Math.floor(available * PINNED_SHARE * 4);
  const pin = (tail: Message[]): Message[] =>
    turnAt < 0 || tail.some((m) => m.id === transcript[turnAt]!.id)
      ? tail
      : [shortenText(transcript[turnAt]!, pinnedCap), ...tail];

  if (total + summaryTokens <= available * HIGH_WATER || shortened.length === 0) {
    const messages = pin(shortened);
    return windowOf(summary, messages, [], undefined, tokensOf(messages) + summaryTokens);
  }
  // Keep the newest messages up to the low-water mark, cutting only where a request may start.
  const target = available * LOW_WATER;
  let start = shortened.length;
  let kept = 0;
  for (let i = shortened.length - 1; i >= 0; i--) {
    kept += costs[i]!;
    if (shortened[i]!.role !== 'tool') {
      if (kept > target && start < shortened.length) break;
      start = i;
    }
  }
  if (start === shortened.length) start = 0;
  const tail = pin(fitOversizedTail(shortened.slice(start), available * HIGH_WATER));
  const older = live.slice(0, start);
  return windowOf(summary, tail, older, older.at(-1)?.id, tokensOf(tail) + summaryTokens);
}

function tokensOf(messages: readonly Message[]): number {
  return messages.reduce((sum, m) => sum + estimateTokens(m), 0);
}

function windowOf(
  summary: AssistantMessage | undefined,
  messages: Message[],
  toSummarise: Message[],
  summariseThroughId: string | undefined,
  estimatedTokens: number,
): ContextWindow {
  const opening = summary
    ? [summaryAsUserTurn(summary)]
    : toSummarise.length
      ? [leftOutTurn(toSummarise.length, messages[0]?.at ?? 0)]
      : [];
  return {
    messages: [...opening, ...messages],
    toSummarise,
    previousSummary: summary?.text,
    summariseThroughId,
    estimatedTokens,
  };
}

/** The summary opens the request as a user turn: both APIs want a user turn first, and it is context, not a reply. */
function summaryAsUserTurn(summary: AssistantMessage): Message {
  return {
    role: 'user',
    id: `summary-${summary.id}`,
    userId: 'runtime',
    text: `[Summary of the earlier conversation, written by the runtime]\n${summary.text}`,
    at: summary.at,
  };
}

/** Before a summary exists (or when making one failed): the request still opens with a user turn, and says why. */
function leftOutTurn(count: number, at: number): Message {
  return {
    role: 'user',
    id: 'left-out',
    userId: 'runtime',
    text: `[${count} earlier messages of this conversation are left out: they do not fit the model's context]`,
    at,
  };
}

function shortenToolResult(message: Message, maxChars: number): Message {
  if (message.role !== 'tool' || message.content.length <= maxChars) return message;
  return { ...message, content: truncatedForModel(message.content, maxChars) };
}

function shortenText(message: Message, maxChars: number): Message {
  if (message.role === 'tool' || message.text.length <= maxChars) return message;
  return { ...message, text: truncatedForModel(message.text, maxChars) };
}

function truncatedForModel(text: string, maxChars: number): string {
  const omitted = text.length - maxChars;
  return `${text.slice(0, maxChars)}\n…[shortened for the model's context: ${omitted} more characters are in the transcript]`;
}

/**
 * Even the newest step alone can exceed the window (a pasted log, many large results): its tool results and
 * texts are shortened evenly until it fits, so the turn goes on instead of failing on every call.
 */
function fitOversizedTail(tail: Message[], limitTokens: number): Message[] {
  if (tail.reduce((sum, m) => sum + estimateTokens(m), 0) <= limitTokens) return tail;
  const perMessageChars = Math.max(200, Math.floor((limitTokens * 4) / Math.max(1, tail.length)));
  return tail.map((message): Message => {
    if (message.role === 'tool') return shortenToolResult(message, perMessageChars);
    if (message.text.length <= perMessageChars) return message;
    return { ...message, text: truncatedForModel(message.text, perMessageChars) };
  });
}
