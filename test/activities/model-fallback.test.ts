/**
 * The model fallback chain (MODEL_FALLBACKS) against a server that speaks the OpenAI API, strict as the real one:
 * the next model answers only when the one before had no capacity (429, 503, overloaded, a connection refused),
 * never after a request error; the providers' retry-after becomes the retry's wait when every model is out; and in
 * a real session, with a real worker and Temporal, the transcript records which model answered each message.
 */
import { createServer } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModel } from '../../activities/model';
import { retryAfterOf } from '../../activities/model/classify-error';
import type { Message } from '../../workflows/session/contract';
import { testConfig } from '../helpers/config';
import { FakeOpenAi, type ChatRequest, type Reply } from '../helpers/fake-openai';
import { TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { withWorker } from '../helpers/worker';

const said: Message[] = [{ role: 'user', id: 'm1', userId: 'alice', text: 'hello', at: 1 }];
const unavailable = (status: number, headers: Record<string, string> = {}): Reply => ({
  status,
  headers,
  body: {
    error: {
      message: status === 429 ? 'Rate limit reached' : 'The server is overloaded',
      type: 'server_error',
      code: null,
    },
  },
});

/** A fake whose answer depends on the model asked for. */
async function fakeBy(models: Record<string, (index: number) => Reply>): Promise<FakeOpenAi> {
  return await new FakeOpenAi((request: ChatRequest, index) => models[request.model]!(index), {
    latency: [20, 60],
  }).start();
}

const modelsOf = (fake: FakeOpenAi) => fake.requests.map((r) => r.model);
const chain = (fake: FakeOpenAi, fallbacks: string) =>
  createModel(
    testConfig(
      {},
      {
        MODEL_PROVIDER: 'openai',
        OPENAI_BASE_URL: fake.url,
        OPENAI_API_KEY: 'sk-test',
        MODEL: 'big',
        MODEL_FALLBACKS: fallbacks,
      },
    ),
  );

async function failureOf(call: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ApplicationFailure)) throw new Error(`not an ApplicationFailure: ${String(error)}`);
  return error;
}

describe('model fallback chain', () => {
  it('answers from the next model when the first has no capacity, and says which model answered', async () => {
    for (const status of [429, 503, 529]) {
      const fake = await fakeBy({ big: () => unavailable(status), small: () => ({ text: 'hi from small' }) });
      try {
        const reply = await chain(fake, 'openai:small')(said);
        expect(reply).toMatchObject({ text: 'hi from small', model: 'openai:small' });
        expect(modelsOf(fake)).toEqual(['big', 'small']);
      } finally {
        await fake.stop();
      }
    }
  });

  it('never falls over on a request error: the same request would fail on any model', async () => {
    const fake = await fakeBy({
      big: () => ({
        status: 400,
        body: { error: { message: 'Invalid tools', type: 'invalid_request_error', code: null } },
      }),
      small: () => ({ text: 'should not be asked' }),
    });
    try {
      const failure = await failureOf(chain(fake, 'openai:small')(said));
      expect(failure.type).toBe('ModelBadRequest');
      expect(failure.nonRetryable).toBe(true);
      expect(modelsOf(fake)).toEqual(['big']);
    } finally {
      await fake.stop();
    }
  });

  it("waits as long as the providers asked once every model is out, and says each one's reason", async () => {
    const fake = await fakeBy({
      big: () => unavailable(503, { 'retry-after': '86400' }),
      small: () => unavailable(429, { 'retry-after': '7' }),
    });
    try {
      const failure = await failureOf(chain(fake, 'openai:small')(said));
      expect(failure.type).toBe('ModelUnavailable');
      expect(failure.nonRetryable).toBe(false);
      // The soonest of the two: the retry (a durable Temporal timer) asks again when one said it would answer.
      expect(failure.nextRetryDelay).toBe(7_000);
      expect(failure.message).toMatch(/openai:big: .*503.*; openai:small: .*429/);
      expect(modelsOf(fake)).toEqual(['big', 'small']);
    } finally {
      await fake.stop();
    }
  });

  it('falls over when the first model cannot be reached at all', async () => {
    // A port nothing listens on, for the first model's provider; the fallback is another provider's server.
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const port = (server.address() as { port: number }).port;
        server.close(() => resolve(port));
      });
    });
    const fake = await fakeBy({ small: () => ({ text: 'reached' }) });
    try {
      // The primary is "anthropic" at the closed port; the fallback is OpenAI's fake.
      const complete = createModel(
        testConfig(
          {},
          {
            MODEL_PROVIDER: 'anthropic',
            ANTHROPIC_BASE_URL: `http://127.0.0.1:${closed}`,
            ANTHROPIC_API_KEY: 'sk-ant-test',
            MODEL: 'claude-test',
            OPENAI_BASE_URL: fake.url,
            OPENAI_API_KEY: 'sk-test',
            MODEL_FALLBACKS: 'openai:small',
          },
        ),
      );
      expect(await complete(said)).toMatchObject({ text: 'reached', model: 'openai:small' });
    } finally {
      await fake.stop();
    }
  });

  it('refuses a fallback it could not call, at start, in words', () => {
    expect(() => testConfig({}, { MODEL_FALLBACKS: 'gpt-4.1' })).toThrow(/not provider:model/);
    expect(() => testConfig({}, { MODEL_FALLBACKS: 'anthropic:claude-sonnet-4-5' })).toThrow(
      /ANTHROPIC_API_KEY is not set/,
    );
    // The policy file may name the chain instead; MODEL_FALLBACKS, when set, wins, and bad entries say where they are.
    const keys = { MODEL_PROVIDER: 'openai', OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'a' };
    expect(testConfig({ modelFallbacks: ['anthropic:claude-x'] }, keys).model.fallbacks).toEqual([
      { provider: 'anthropic', name: 'claude-x' },
    ]);
    expect(
      testConfig({ modelFallbacks: ['anthropic:claude-x'] }, { ...keys, MODEL_FALLBACKS: 'openai:small' })
        .model.fallbacks,
    ).toEqual([{ provider: 'openai', name: 'small' }]);
    expect(() => testConfig({ modelFallbacks: ['claude-x'] }, keys)).toThrow(
      /the policy file's modelFallbacks entry "claude-x" is not provider:model/,
    );
  });

  it('reads retry-after as seconds, as a date, and retry-after-ms', () => {
    const headers = (entries: Record<string, string>) => new Headers(entries);
    expect(retryAfterOf(headers({ 'retry-after': '30' }))).toBe(30_000);
    expect(retryAfterOf(headers({ 'retry-after-ms': '250', 'retry-after': '30' }))).toBe(250);
    expect(retryAfterOf(headers({ 'retry-after': new Date(61_000).toUTCString() }), 1_000)).toBe(60_000);
    expect(retryAfterOf(headers({}))).toBeUndefined();
    expect(retryAfterOf(headers({ 'retry-after': 'soon' }))).toBeUndefined();
  });
});

describe('model fallback in a session', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTestTemporal();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  /**
   * A session on a real worker whose model is `fake`'s "big" (with `fallbacks`), the fake stopped afterwards.
   */
  async function inSession(
    fake: FakeOpenAi,
    options: { fallbacks?: string; policy?: Record<string, unknown> },
    body: (s: TestSession) => Promise<void>,
  ): Promise<void> {
    try {
      await withWorker(
        env,
        async (taskQueue) => await body(new TestSession(env.client, taskQueue)),
        options.policy ?? {},
        {
          MODEL_PROVIDER: 'openai',
          OPENAI_BASE_URL: fake.url,
          OPENAI_API_KEY: 'sk-test',
          MODEL: 'big',
          ...(options.fallbacks ? { MODEL_FALLBACKS: options.fallbacks } : {}),
        },
      );
    } finally {
      await fake.stop();
    }
  }

  it('goes on with the model that asked for a tool, even when it is overloaded for that step', async () => {
    const fake = await fakeBy({
      big: (index) =>
        index === 0
          ? { toolCalls: [{ id: 'call_1', name: 'current_time', args: {} }] }
          : index === 1
            ? unavailable(503)
            : { text: 'the time, from big' },
      small: () => ({ text: 'from small, which must not continue the step' }),
    });
    await inSession(fake, { fallbacks: 'openai:small' }, async (s) => {
      await s.say('what time is it?');
      const view = await s.idle();
      const answers = view.transcript.filter((m) => m.role === 'assistant');
      expect(answers.at(-1)).toMatchObject({ text: 'the time, from big', model: 'openai:big' });
      // The step's follow-up was retried on big (Temporal's retry), never sent to small.
      expect(modelsOf(fake)).toEqual(['big', 'big', 'big']);
    });
  });

  it('waits visibly and durably when the provider asks for a long wait, then answers', async () => {
    // A retry-after past what an activity retry should hide (over 30 s): the conversation waits, and says until when.
    const fake = await fakeBy({
      big: (index) => (index === 0 ? unavailable(503, { 'retry-after': '31' }) : { text: 'back again' }),
    });
    await inSession(fake, {}, async (s) => {
      await s.say('hello');
      const waiting = await s.waitFor(
        (v) => v.notices.some((n) => n.text.includes("The model's provider asked us to wait until")),
        'the notice of the wait',
      );
      expect(waiting.status).toBe('running');
      expect(modelsOf(fake)).toEqual(['big']);
      const view = await s.waitFor((v) => v.status === 'idle', 'the answer after the wait', 60_000);
      expect(view.transcript.filter((m) => m.role === 'assistant').at(-1)).toMatchObject({
        text: 'back again',
      });
      // Asked once, then once after the wait: no retries spent meanwhile.
      expect(modelsOf(fake)).toEqual(['big', 'big']);
    });
  });

  it("says at once when the provider's wait is longer than the conversation waits for a model", async () => {
    const fake = await fakeBy({ big: () => unavailable(429, { 'retry-after': '86400' }) });
    await inSession(fake, { policy: { modelOutageTimeout: '1h' } }, async (s) => {
      await s.say('hello');
      const view = await s.idle();
      expect(view.transcript.filter((m) => m.role === 'assistant').at(-1)?.text).toMatch(
        /^⚠️ The model's provider asked us to wait until \d\d:\d\d UTC, longer than this conversation waits/,
      );
      expect(modelsOf(fake)).toEqual(['big']);
    });
  });

  it('records in the transcript which model answered each message', async () => {
    // The primary is overloaded for the second message only.
    const fake = await fakeBy({
      big: (index) => (index === 1 ? unavailable(529) : { text: 'from big' }),
      small: () => ({ text: 'from small' }),
    });
    await inSession(fake, { fallbacks: 'openai:small' }, async (s) => {
      await s.say('first');
      await s.idle();
      await s.say('second');
      const view = await s.idle();
      const answers = view.transcript.filter((m) => m.role === 'assistant');
      expect(answers.map((m) => [m.text, (m as { model?: string }).model])).toEqual([
        ['from big', 'openai:big'],
        ['from small', 'openai:small'],
      ]);
    });
  });
});
