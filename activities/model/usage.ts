/** Token counts when the provider gives none (the scripted model, a Chat Completions server without `usage`). */
import type { ModelUsage } from '../../common/budgets';

/** About four characters a token, counted over the request and the answer as sent. */
export function estimatedUsage(request: unknown, answer: unknown): ModelUsage {
  const estimate = (value: unknown) => Math.ceil((JSON.stringify(value) ?? '').length / 4);
  return { inputTokens: estimate(request), outputTokens: estimate(answer) };
}

/** A provider's counts when they are whole non-negative numbers; anything else is not a count. */
export function countedUsage(input: unknown, output: unknown, cachedInput?: unknown): ModelUsage | undefined {
  const count = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  if (!count(input) || !count(output)) return undefined;
  const cached = count(cachedInput) && cachedInput > 0 ? Math.min(cachedInput, input) : 0;
  return { inputTokens: input, outputTokens: output, ...(cached ? { cachedInputTokens: cached } : {}) };
}
