/**
 * Streamed answers in the web chat (#22): real worker and gateway processes, the worker streaming to the
 * gateway's /internal/stream, the page in Chromium. The text appears while the model writes it and the final
 * message replaces it; a worker killed mid-stream leaves no duplicate (the retried call streams afresh and the
 * answer arrives once); the gateway's endpoint refuses anyone without the workers' secret; Stop keeps what was written.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_PATH } from '../../infra/stream-relay';
import { stateQuery, type SessionView } from '../../workflows/session/contract';
import { launchBrowser } from '../helpers/browser';
import { FakeOpenAi } from '../helpers/fake-openai';
import { freePort } from '../helpers/processes';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

const ARTIFACTS = path.resolve(__dirname, '../artifacts');
const TOKEN = 'browser-stream-token-0123456789abcdef';
const ANSWER = Array.from(
  { length: 40 },
  (_, i) => `Sentence ${i + 1} of the answer, written as it streams.`,
).join(' ');

let env: TestWorkflowEnvironment;
let model: FakeOpenAi;
let stack: Stack;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  env = await startTestTemporal();
  // About six seconds of streaming per answer: long enough to see it, and to kill the worker in the middle.
  model = await new FakeOpenAi(() => ({ text: ANSWER }), { streamGapMs: 15 }).start();
  const port = await freePort();
  stack = await startStack({
    temporalAddress: env.address,
    port,
    env: {
      MODEL_PROVIDER: 'openai',
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: 'k',
      STREAM_URL: `http://127.0.0.1:${port}`,
      STREAM_TOKEN: TOKEN,
    },
  });
  browser = await launchBrowser();
  page = await browser.newPage({
    viewport: { width: 1280, height: 900 },
    extraHTTPHeaders: { 'x-forwarded-user': 'alice' },
  });
  await page.goto(`http://127.0.0.1:${port}/`);
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await model?.stop();
  await env?.teardown();
});

async function ask(text: string): Promise<void> {
  await page.getByTestId('new-session').click();
  await page.waitForURL(/#.+/);
  await page.getByTestId('message-input').fill(text);
  await page.getByTestId('send').click();
}

/** The partial text on the page, once it is part of the answer but not all of it. */
async function partway(): Promise<string> {
  let text = '';
  await expect
    .poll(
      async () => {
        const partial = page.getByTestId('partial-answer');
        text = (await partial.count()) ? ((await partial.textContent()) ?? '') : '';
        return text.length > 40 && text.length < ANSWER.length;
      },
      { timeout: 20_000, interval: 50 },
    )
    .toBe(true);
  return text;
}

describe('streamed answers in the web chat', () => {
  it('shows the answer while it is written, then the final message in its place', async () => {
    await ask('write something long');
    const shown = await partway();
    expect(ANSWER).toContain(shown.replace(/^agent · writing…/, '').slice(0, 40));
    await page.screenshot({ path: path.join(ARTIFACTS, 'streaming.png') });
    await expect
      .poll(() => page.getByTestId('assistant-message').last().textContent(), { timeout: 30_000 })
      .toContain(ANSWER);
    expect(await page.getByTestId('partial-answer').count()).toBe(0);
    expect(await page.getByTestId('assistant-message').count()).toBe(1);
    // Which model wrote it, beside the time (a fallback of MODEL_FALLBACKS shows its own name here).
    expect(await page.getByTestId('assistant-message').last().locator('.meta').textContent()).toContain(
      'openai:gpt-5-mini',
    );
  });

  it('replaces a stream cut by a killed worker, and the answer arrives once', async () => {
    const before = model.requests.length;
    await ask('write it again');
    await partway();
    await stack.restartWorker(); // SIGKILL mid-stream: the model call is retried by the new worker
    await until(
      'the answer given by the new worker',
      async () => (await page.getByTestId('assistant-message').last().textContent())?.includes(ANSWER),
      { timeoutMs: 80_000, context: () => stack.logTail() },
    );
    expect(model.requests.length).toBeGreaterThan(before + 1);
    expect(await page.getByTestId('assistant-message').count()).toBe(1);
    expect(await page.getByTestId('partial-answer').count()).toBe(0);
  });

  it("refuses stream updates without the workers' secret", async () => {
    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(`http://127.0.0.1:${stack.port}${STREAM_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const update = { workflowId: 'session:web:x', streamId: 's', text: 'forged', seq: 1 };
    expect((await post({}, update)).status).toBe(401);
    expect((await post({ authorization: 'Bearer wrong-token-0123456789' }, update)).status).toBe(401);
    expect((await post({ authorization: `Bearer ${TOKEN}` }, { text: 42 })).status).toBe(400);
    expect((await post({ authorization: `Bearer ${TOKEN}` }, update)).status).toBe(204);
  });

  it('keeps the stream secret and the partial text out of workflow history, logs and the page', async () => {
    const sessionId = page.url().split('#')[1]!;
    const history = await env.client.workflow.getHandle(`session:web:${sessionId}`).fetchHistory();
    const recorded = JSON.stringify(history);
    expect(recorded).not.toContain(TOKEN);
    // Only the final message is recorded: the answer appears as a whole, never as the partial texts before it.
    expect(recorded.split('Sentence 1 of the answer').length - 1).toBeLessThanOrEqual(2);
    expect(stack.worker.output + stack.gateway.output).not.toContain(TOKEN);
    expect(await page.content()).not.toContain(TOKEN);
  });

  it('keeps what was written when Stop is pressed, marked (stopped), on the page and in the transcript', async () => {
    await ask('write something I will stop');
    const shown = await partway();
    await page.getByTestId('stop').click();
    await expect.poll(() => page.getByTestId('status').getAttribute('data-status')).toBe('idle');
    const answers = page.getByTestId('assistant-message');
    await expect.poll(() => answers.last().textContent()).toContain('Stopped by @alice');
    // The answer the person was reading stays, at least as long as it was when they pressed Stop.
    const kept = (await answers.nth(-2).textContent()) ?? '';
    expect(kept).toMatch(/\(stopped\)$/);
    expect(kept.length).toBeGreaterThanOrEqual(shown.replace(/^agent · writing…/, '').length);
    expect(kept).toContain(ANSWER.slice(0, 40));
    expect(await page.getByTestId('partial-answer').count()).toBe(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'stopped-answer.png') });
    const sessionId = page.url().split('#')[1]!;
    const view = (await env.client.workflow
      .getHandle(`session:web:${sessionId}`)
      .query(stateQuery)) as SessionView;
    expect(view.transcript.map((m) => m.role === 'assistant' && m.stopped === true)).toEqual([
      false,
      true,
      false,
    ]);
  });
});
