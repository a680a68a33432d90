/**
 * A real AG-UI front end, as teams build one: an assistant-ui page (`@assistant-ui/react` with its AG-UI adapter
 * `@assistant-ui/react-ag-ui`, React in Chromium), served from its own origin and signed in with the local token. It
 * asks for a command, shows the approval as the adapter's pending interrupt, and after the worker and the gateway
 * were SIGKILLed and started again, the person's click resumes it through the new gateway: the command runs once.
 * Then a question is answered from the page the same way.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import type { SessionView } from '../../workflows/session/contract';
import { launchBrowser } from '../helpers/browser';
import { servePage, type PageServer } from '../helpers/page-server';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';
import { WebClient } from '../helpers/web-client';

const PAGE_DIR = path.resolve(__dirname, '../fixtures/assistant-ui-page');
let env: TestWorkflowEnvironment;
let stack: Stack;
let browser: Browser;
let pageServer: PageServer;
let pagePort: number;

beforeAll(async () => {
  env = await startTestTemporal();
  pageServer = await servePage(PAGE_DIR, 'main.jsx', {
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  pagePort = pageServer.port;
  stack = await startStack({
    temporalAddress: env.address,
    env: { WEB_TRUSTED_USER_HEADER: '', AGUI_ALLOWED_ORIGINS: `http://127.0.0.1:${pagePort}` },
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await pageServer?.close();
  await stack?.stop();
  await env?.teardown();
});

const token = () => readFileSync(path.join(stack.env.DATA_DIR!, 'web-token'), 'utf8').trim();

describe('an assistant-ui page on the AG-UI endpoint', () => {
  it('shows an approval as an interrupt, and a click after a worker and gateway SIGKILL runs the command once; then answers a question', async () => {
    const thread = `aui-${randomBytes(4).toString('hex')}`;
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(
      `http://127.0.0.1:${pagePort}/#gateway=http://localhost:${stack.port}&token=${token()}&thread=${thread}`,
    );
    await page.getByLabel('Message').fill('run `echo assistant-ui >> a.txt`');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('button[data-answer="approve"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('.interrupt pre').textContent()).toContain('Approval needed: shell_execute');
    expect(await page.locator('.interrupt button').allTextContents()).toEqual([
      'approve',
      'deny',
      'always',
      'edit',
    ]);
    const file = path.join(sessionWorkdir(stack.env.DATA_DIR!, `session:web:${thread}`), 'a.txt');
    expect(existsSync(file)).toBe(false);

    // Deploy-like: both processes die hard and come back while the page waits on the person.
    await stack.restartWorker();
    await stack.restartGateway();
    await page.locator('button[data-answer="approve"]').click();
    await until('the approved command’s output', () => existsSync(file), { timeoutMs: 60_000 });
    await until(
      'the interrupt gone from the page',
      async () => (await page.locator('.interrupt').count()) === 0,
    );
    expect(readFileSync(file, 'utf8')).toBe('assistant-ui\n');

    await page.getByLabel('Message').fill('ask one');
    await page.getByRole('button', { name: 'Send' }).click();
    const option = page.locator('.interrupt button').first();
    await option.waitFor({ timeout: 30_000 });
    const chosen = (await option.textContent()) ?? '';
    await option.click();
    const web = new WebClient(`http://127.0.0.1:${stack.port}`, { bearer: token() });
    const answered = await until(
      'the question answered',
      async () => {
        const shown = (await web.request('GET', `/sessions/${thread}`)).body as SessionView;
        return shown.gates.find((g) => g.kind === 'question' && g.status === 'resolved');
      },
      { timeoutMs: 30_000 },
    );
    expect(answered.resolution).toMatchObject({ outcome: 'answered', by: 'local' });
    expect(JSON.stringify(answered.resolution?.answers)).toContain(chosen);
    expect(readFileSync(file, 'utf8')).toBe('assistant-ui\n');
    expect(await page.locator('#errors').textContent()).toBe('');
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});
