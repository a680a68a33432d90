/**
 * Fork and retry on the web page (real worker and gateway processes, the page in Chromium, the model a fake Chat
 * Completions server with two models): "Retry" on an answer with the other model opens a new conversation that says
 * where it came from and shows the two answers side by side; the original lists its fork; "Fork" on a message opens
 * a conversation holding everything up to it.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser';
import { FakeOpenAi, type ChatRequest } from '../helpers/fake-openai';
import { freePort } from '../helpers/processes';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';

const ARTIFACTS = path.resolve(__dirname, '../artifacts');
let env: TestWorkflowEnvironment;
let model: FakeOpenAi;
let stack: Stack;
let browser: Browser;
let page: Page;

function reply(request: ChatRequest, index: number) {
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return { text: `The command ran. (answered by ${request.model})` };
  const text = typeof last.content === 'string' ? last.content : '';
  const command = /`([^`]+)`/.exec(text)?.[1];
  if (command) return { toolCalls: [{ id: `call_${index}`, name: 'shell_execute', args: { command } }] };
  return { text: `Hello. (answered by ${request.model})` };
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  env = await startTestTemporal();
  model = await new FakeOpenAi(reply, { latency: [30, 90] }).start();
  const port = await freePort();
  stack = await startStack({
    temporalAddress: env.address,
    port,
    env: {
      MODEL_PROVIDER: 'openai',
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: 'k',
      MODEL: 'gpt-a',
      MODEL_FALLBACKS: 'openai:gpt-b',
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

const sessionOfPage = () => decodeURIComponent(new URL(page.url()).hash.slice(1));

describe('fork and retry on the page', () => {
  it('retries an answer with the other model side by side, lists the fork on the original, and forks from a message', async () => {
    await page.getByTestId('new-session').click();
    await page.waitForURL(/#.+/);
    await page.getByTestId('message-input').fill('run `echo forked`');
    await page.getByTestId('send').click();
    const original = sessionOfPage();
    const gate = await stack.web.pendingGate(original);
    await stack.web.decide(original, gate.id, 'approve');
    const answer = page.getByTestId('assistant-message').filter({ hasText: 'The command ran.' });
    await answer.waitFor();

    // Retry with the other model: a new conversation opens, saying where it came from, the answers side by side.
    await answer.getByTestId('retry-model').selectOption('openai:gpt-b');
    await answer.getByTestId('retry').click();
    await page.waitForURL((url) => !url.hash.includes(original));
    const retry = sessionOfPage();
    await expect.poll(() => page.getByTestId('forked-from').textContent()).toContain('Retry of');
    expect(await page.getByTestId('forked-from').textContent()).toContain('with openai:gpt-b');
    await expect
      .poll(() => page.getByTestId('retried-answer').textContent(), { timeout: 30_000 })
      .toContain('answered by gpt-b');
    expect(await page.getByTestId('original-answer').textContent()).toContain('answered by gpt-a');
    expect(await page.getByTestId('original-answer').textContent()).toContain('openai:gpt-a');
    await page.screenshot({ path: path.join(ARTIFACTS, 'fork-retry-side-by-side.png') });

    // Back on the original: its fork is listed (from visibility, a moment behind).
    await page.getByTestId('forked-from').getByRole('link').click();
    await page.waitForURL((url) => url.hash.includes(original));
    await expect
      .poll(
        async () => {
          await page.reload();
          return (await page.getByTestId('forks').count()) ? page.getByTestId('forks').textContent() : '';
        },
        { timeout: 30_000, interval: 1_000 },
      )
      .toContain('1 fork');
    await page.getByTestId('forks').locator('summary').click();
    expect(await page.getByTestId('forks').textContent()).toContain(retry.slice(0, 8));

    // Fork from the person's own message: everything up to it, answered again, its command asking for approval anew.
    await page.getByTestId('user-message').first().getByTestId('fork').click();
    await page.waitForURL((url) => !url.hash.includes(original));
    await expect.poll(() => page.getByTestId('forked-from').textContent()).toContain('Fork of');
    await page.getByTestId('tool-call').filter({ hasText: 'waiting for approval' }).waitFor();
    expect(await page.getByTestId('user-message').count()).toBe(1);
    expect(await page.getByTestId('assistant-message').filter({ hasText: 'The command ran' }).count()).toBe(
      0,
    );
    await page.screenshot({ path: path.join(ARTIFACTS, 'fork-from-message.png') });
  });
});
