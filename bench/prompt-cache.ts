/**
 * What prompt caching saves: a 20-turn conversation (a person's question of ~150 words, an answer of ~120, the
 * built-in tools offered) through the runtime's own model code against fakes that report cached tokens as the real
 * APIs do (test/helpers/fake-openai.ts, fake-anthropic.ts). For turn 20: its input tokens, those read from the cache,
 * and the input billed in full-price tokens with caching (cached input at a tenth of the price, as OpenAI's and
 * Anthropic's current models charge reads) against without.
 */
import { createModel } from '../activities/model';
import type { Message } from '../workflows/session/contract';
import { testConfig } from '../test/helpers/config';
import { FakeAnthropic } from '../test/helpers/fake-anthropic';
import { FakeOpenAi } from '../test/helpers/fake-openai';

const CACHED_PRICE_RATIO = 0.1;

export interface CacheFigure {
  provider: 'openai' | 'anthropic';
  turns: number;
  inputTokens: number;
  cachedTokens: number;
  /** Turn N's input in full-price tokens: without caching, and with it. */
  billedWithout: number;
  billedWith: number;
}

const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i % 17}`).join(' ');

async function measure(provider: 'openai' | 'anthropic', turns: number): Promise<CacheFigure> {
  const reply = () => ({ text: words(120, 'answer') });
  const openai =
    provider === 'openai'
      ? await new FakeOpenAi(reply, { promptCache: true, latency: [1, 2] }).start()
      : undefined;
  const anthropic =
    provider === 'anthropic' ? await new FakeAnthropic(reply, { latency: [1, 2] }).start() : undefined;
  try {
    const complete = createModel(
      testConfig(
        {},
        openai
          ? { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: 'sk', MODEL: 'm' }
          : {
              MODEL_PROVIDER: 'anthropic',
              ANTHROPIC_BASE_URL: anthropic!.url,
              ANTHROPIC_API_KEY: 'sk',
              MODEL: 'c',
            },
      ),
    );
    const transcript: Message[] = [];
    let last = { inputTokens: 0, cachedTokens: 0 };
    for (let n = 0; n < turns; n++) {
      transcript.push({ role: 'user', id: `u${n}`, userId: 'alice', text: words(150, `q${n}-`), at: n });
      const answer = await complete(transcript, undefined, [], undefined, { cacheKey: 'session:web:bench' });
      transcript.push({ role: 'assistant', id: `a${n}`, text: answer.text, toolCalls: [], at: n });
      last = { inputTokens: answer.usage!.inputTokens, cachedTokens: answer.usage!.cachedInputTokens ?? 0 };
    }
    return {
      provider,
      turns,
      ...last,
      billedWithout: last.inputTokens,
      billedWith: Math.round(last.inputTokens - last.cachedTokens + last.cachedTokens * CACHED_PRICE_RATIO),
    };
  } finally {
    await openai?.stop();
    await anthropic?.stop();
  }
}

export async function measurePromptCache(turns = 20): Promise<CacheFigure[]> {
  return [await measure('openai', turns), await measure('anthropic', turns)];
}
