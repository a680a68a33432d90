/** Token counts when the provider gives none (the scripted model, a Chat Completions server without `usage`). */
import type { ModelUsage } from '../../common/budgets';

/** About four characters a token, counted over the request and the answer as sent. */
export function estimatedUsage(request: unknown, answer: unknown): ModelUsage {
  const estimate = (value: unknown) => Math.ceil((JSON.stringify(value) ?? '').length / 4);
  return { inputTokens: estimate(request), outputTokens: estimate(answer) };
}

/** A provider's counts when they are whole non-negative numbers; anything else is not a count. */
export function countedUsage(input: unknown, output: unknown): ModelUsage | undefined {
  const count = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  return count(input) && count(output) ? { inputTokens: input, outputTokens: output } : undefined;
}
