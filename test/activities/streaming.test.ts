/**
 * Streamed answers, worker side (#22): with STREAM_URL and STREAM_TOKEN, a web session's model call streams
 * (Chat Completions `stream: true` with usage; the Messages API's event stream), and the worker sends the text
 * so far to the gateway endpoint, authenticated, while the final message goes through the workflow as always.
 * The "gateway" here is a local server that records what it is sent; the model servers stream like the real ones.
 */
import { createServer, type Server } from 'node:http';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_PATH, type StreamUpdate } from '../../infra/stream-relay';
import { testConfig } from '../helpers/config';
import { FakeAnthropic } from '../helpers/fake-anthropic';
import { FakeOpenAi } from '../helpers/fake-openai';
import { lastAnswer, TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';
import { createTestWorker } from '../helpers/worker';

const TOKEN = 'stream-token-for-tests-0123456789';
const ANSWER =
  `Here is a long answer, written a few characters at a time. ${'More words follow. '.repeat(12)}`.trim();

let env: TestWorkflowEnvironment;
let gateway: Server;
let gatewayUrl: string;
const received: { authorization: string | undefined; update: StreamUpdate }[] = [];

beforeAll(async () => {
  env = await startTestTemporal();
  gateway = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      if (req.url === STREAM_PATH)
        received.push({ authorization: req.headers.authorization, update: JSON.parse(raw) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', () => resolve()));
  gatewayUrl = `http://127.0.0.1:${(gateway.address() as { port: number }).port}`;
});
afterEach(() => {
  received.length = 0;
});
afterAll(async () => {
  gateway?.close();
  await env?.teardown();
});

async function streamedTurn(providerEnv: Record<string, string>) {
  const config = testConfig({}, { ...providerEnv, STREAM_URL: gatewayUrl, STREAM_TOKEN: TOKEN });
  const { worker, taskQueue } = await createTestWorker(env, config);
  return await worker.runUntil(async () => {
    const session = new TestSession(env.client, taskQueue);
    await session.say('tell me something long');
    const view = await session.idle();
    const mine = await until('the final update', () => {
      const updates = received.filter((r) => r.update.workflowId === session.workflowId);
      return updates.some((r) => r.update.done && r.update.text === ANSWER) ? updates : undefined;
    });
    return { view, updates: mine };
  });
}

function expectStreamed(updates: { authorization: string | undefined; update: StreamUpdate }[]) {
  expect(updates.every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
  // Partial text first, growing (throttled, so fewer updates than pieces; numbered, since requests may pass
  // each other), then the whole answer, done.
  const inOrder = [...updates].sort((a, b) => (a.update.seq ?? 0) - (b.update.seq ?? 0)).map((r) => r.update);
  expect(inOrder.length).toBeGreaterThan(2);
  expect(inOrder[0]!.text.length).toBeLessThan(ANSWER.length);
  for (const [i, update] of inOrder.entries()) {
    expect(ANSWER.startsWith(update.text)).toBe(true);
    if (i) expect(update.text.length).toBeGreaterThanOrEqual(inOrder[i - 1]!.text.length);
  }
  expect(inOrder.at(-1)).toMatchObject({ text: ANSWER, done: true });
  expect(new Set(updates.map((r) => r.update.streamId)).size).toBe(1);
}

describe('streamed answers (worker side)', () => {
  it('streams a Chat Completions answer to the gateway as it is written; history gets the final message once', async () => {
    const model = await new FakeOpenAi(() => ({ text: ANSWER }), { streamGapMs: 40 }).start();
    try {
      const { view, updates } = await streamedTurn({
        MODEL_PROVIDER: 'openai',
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: 'k',
      });
      expect(model.requests[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      expectStreamed(updates);
      expect(lastAnswer(view)).toBe(ANSWER);
      expect(view.transcript.filter((m) => m.role === 'assistant')).toHaveLength(1);
      // The streamed call's usage is the provider's own (the last chunk), as without streaming.
      const reported = model.usages.reduce((sum, u) => sum + u.prompt_tokens + u.completion_tokens, 0);
      expect(view.usage).toMatchObject({ calls: 1, tokens: reported });
    } finally {
      await model.stop();
    }
  });

  it('streams a Messages API answer the same way, tool calls included', async () => {
    const model = await new FakeAnthropic(
      (_request, index) =>
        index === 0
          ? { toolCalls: [{ id: 'toolu_1', name: 'current_time', args: { timezone: 'Asia/Tokyo' } }] }
          : { text: ANSWER },
      { streamGapMs: 40 },
    ).start();
    try {
      const { view, updates } = await streamedTurn({
        MODEL_PROVIDER: 'anthropic',
        ANTHROPIC_BASE_URL: model.url,
        ANTHROPIC_API_KEY: 'k',
      });
      expect(model.requests.every((r) => r.stream === true)).toBe(true);
      // The tool call streamed as JSON deltas and ran with its arguments whole.
      const tool = view.transcript.find((m) => m.role === 'tool');
      expect(tool).toMatchObject({ name: 'current_time', status: 'ok' });
      const call = view.transcript.find((m) => m.role === 'assistant' && m.toolCalls.length);
      expect(call?.role === 'assistant' && call.toolCalls[0]!.args).toEqual({ timezone: 'Asia/Tokyo' });
      // The answer's own stream (the second call) grew to the whole text.
      const answerStream = updates.find((r) => r.update.done && r.update.text === ANSWER)!.update.streamId;
      expectStreamed(updates.filter((r) => r.update.streamId === answerStream));
      expect(lastAnswer(view)).toBe(ANSWER);
    } finally {
      await model.stop();
    }
  });
});
