/**
 * Prompt caching against servers that report cached tokens the way the real APIs do: OpenAI's automatic prefix cache
 * keyed by `prompt_cache_key` (the conversation), Anthropic's breakpoints (the system prompt, the conversation so
 * far). A conversation's second call reads its first call's prefix from the cache; usage says how much, and the
 * cost charges it at the policy's cachedInput price; budgets count cached tokens apart.
 */
import { describe, expect, it } from 'vitest';
import { createModel, pricedReply } from '../../activities/model';
import { withCacheBreakpoints } from '../../activities/model/anthropic';
import { addUsage, costOf, NO_SPEND } from '../../common/budgets';
import type { Message } from '../../workflows/session/contract';
import { testConfig } from '../helpers/config';
import { FakeAnthropic } from '../helpers/fake-anthropic';
import { FakeOpenAi } from '../helpers/fake-openai';

/** A conversation long enough to be cached (over 1,024 tokens), growing by a question and an answer per turn. */
function conversation(turns: number): Message[] {
  const messages: Message[] = [];
  for (let n = 0; n < turns; n++) {
    messages.push({
      role: 'user',
      id: `u${n}`,
      userId: 'alice',
      text: `Question ${n}: ${'context '.repeat(400)}`,
      at: n,
    });
    if (n < turns - 1)
      messages.push({ role: 'assistant', id: `a${n}`, text: `Answer ${n}`, toolCalls: [], at: n });
  }
  return messages;
}

describe('prompt caching', () => {
  it('OpenAI: a conversation keyed by its id reads the last call’s prefix from the cache, priced at the cached rate', async () => {
    const fake = await new FakeOpenAi(() => ({ text: 'ok' }), {
      promptCache: true,
      latency: [5, 10],
    }).start();
    try {
      const complete = createModel(
        testConfig(
          {},
          { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk', MODEL: 'm' },
        ),
      );
      const first = await complete(conversation(2), undefined, [], undefined, { cacheKey: 'session:web:c1' });
      const second = await complete(conversation(3), undefined, [], undefined, {
        cacheKey: 'session:web:c1',
      });
      expect(fake.requests.map((r) => r.prompt_cache_key)).toEqual(['session:web:c1', 'session:web:c1']);
      expect(first.usage?.cachedInputTokens).toBeUndefined();
      expect(second.usage!.cachedInputTokens).toBeGreaterThan(1_000);
      expect(second.usage!.cachedInputTokens).toBeLessThan(second.usage!.inputTokens);
      // Another conversation shares nothing with it.
      const other = await complete(conversation(3), undefined, [], undefined, { cacheKey: 'session:web:c2' });
      expect(other.usage?.cachedInputTokens).toBeUndefined();
      // Priced: cached input at its own rate.
      const price = { input: 1, output: 2, cachedInput: 0.1 };
      const priced = pricedReply(second, price).usage!;
      const full = costOf({ inputTokens: priced.inputTokens, outputTokens: priced.outputTokens }, price)!;
      expect(priced.costUsd).toBeLessThan(full);
      expect(priced.costUsd).toBeCloseTo(
        ((priced.inputTokens - priced.cachedInputTokens!) * 1 +
          priced.cachedInputTokens! * 0.1 +
          priced.outputTokens * 2) /
          1_000_000,
      );
      // Budgets count every token, and the cached ones apart.
      const spend = addUsage(addUsage(NO_SPEND, first.usage), second.usage);
      expect(spend.tokens).toBe(
        first.usage!.inputTokens +
          first.usage!.outputTokens +
          second.usage!.inputTokens +
          second.usage!.outputTokens,
      );
      expect(spend.cachedTokens).toBe(second.usage!.cachedInputTokens);
    } finally {
      await fake.stop();
    }
  });

  it('Anthropic: breakpoints on the system prompt and the conversation so far; the next call reads them', async () => {
    const fake = await new FakeAnthropic(() => ({ text: 'ok' }), { latency: [5, 10] }).start();
    try {
      const complete = createModel(
        testConfig(
          {},
          {
            MODEL_PROVIDER: 'anthropic',
            ANTHROPIC_BASE_URL: fake.url,
            ANTHROPIC_API_KEY: 'sk-ant',
            MODEL: 'c',
          },
        ),
      );
      const first = await complete(conversation(2));
      const second = await complete(conversation(3));
      expect(fake.refusals).toEqual([]);
      const sent = fake.requests[1]!;
      expect(Array.isArray(sent.system) && sent.system[0]!.cache_control).toEqual({ type: 'ephemeral' });
      expect(fake.usages[0]!.cache_read_input_tokens).toBe(0);
      expect(fake.usages[1]!.cache_read_input_tokens).toBeGreaterThan(1_000);
      expect(first.usage?.cachedInputTokens).toBeUndefined();
      expect(second.usage!.cachedInputTokens).toBe(fake.usages[1]!.cache_read_input_tokens);
      // Every token is still counted as input.
      expect(second.usage!.inputTokens).toBe(
        fake.usages[1]!.input_tokens +
          fake.usages[1]!.cache_read_input_tokens +
          fake.usages[1]!.cache_creation_input_tokens,
      );
    } finally {
      await fake.stop();
    }
  });

  it('marks at most two places in the conversation: its end, and the end of the previous call', () => {
    const marks = (messages: ReturnType<typeof withCacheBreakpoints>) =>
      messages.map((m) =>
        typeof m.content === 'string'
          ? 0
          : m.content.filter((b) => 'cache_control' in b && b.cache_control).length,
      );
    const three = [
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'a' }] },
      { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'b' }] },
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'c' }] },
    ];
    expect(marks(withCacheBreakpoints(three))).toEqual([1, 0, 1]);
    expect(marks(withCacheBreakpoints(three.slice(0, 1)))).toEqual([1]);
    expect(marks(withCacheBreakpoints([]))).toEqual([]);
  });
});
