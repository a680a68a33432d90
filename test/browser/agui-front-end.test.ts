/**
 * An AG-UI front end on another origin, in Chromium: a page of its own (test/fixtures/agui-page, the protocol's
 * HttpAgent bundled for the browser) served from a different port than the gateway, signed in with the local token,
 * allowed by AGUI_ALLOWED_ORIGINS. The browser enforces CORS for real: the page asks for a command, sees the
 * approval as an interrupt with its choices, clicks approve, and the command runs once. The same page from an
 * origin the gateway does not name gets nothing.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import { launchBrowser } from '../helpers/browser';
import { servePage, type PageServer } from '../helpers/page-server';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';
import { WebClient } from '../helpers/web-client';

const PAGE_DIR = path.resolve(__dirname, '../fixtures/agui-page');
let env: TestWorkflowEnvironment;
let stack: Stack;
let browser: Browser;
let pageServer: PageServer;
let pagePort: number;

beforeAll(async () => {
  env = await startTestTemporal();
  pageServer = await servePage(PAGE_DIR, 'main.mjs');
  pagePort = pageServer.port;
  stack = await startStack({
    temporalAddress: env.address,
    // Local mode (the secret of `npm start`'s link as a bearer token), and this page's origin allowed.
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
const gatewayUrl = () => `http://localhost:${stack.port}`;

describe('an AG-UI front end on another origin', () => {
  it('drives a conversation, shows the approval as an interrupt, and approves it: the command runs once', async () => {
    const thread = `front-${randomBytes(4).toString('hex')}`;
    const page = await browser.newPage();
    await page.goto(
      `http://127.0.0.1:${pagePort}/#gateway=${gatewayUrl()}&token=${token()}&thread=${thread}`,
    );
    await page.getByLabel('Message').fill('run `echo front-end >> f.txt`');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('button[data-choice="approve"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('.interrupt pre').textContent()).toContain('Approval needed: shell_execute');
    expect(await page.locator('.interrupt button').allTextContents()).toEqual([
      'approve',
      'deny',
      'always',
      'edit',
    ]);
    await page.locator('button[data-choice="approve"]').click();
    const file = path.join(sessionWorkdir(stack.env.DATA_DIR!, `session:web:${thread}`), 'f.txt');
    await until('the approved command’s output', () => existsSync(file));
    await until('the answer on the page', async () => (await page.locator('[data-role="tool"]').count()) > 0);
    expect(readFileSync(file, 'utf8')).toBe('front-end\n');
    expect(await page.locator('#errors').textContent()).toBe('');
    await page.close();
  });

  it('gets nothing from an origin the gateway does not name', async () => {
    const thread = `front-${randomBytes(4).toString('hex')}`;
    const page = await browser.newPage();
    // The same page under another name for the same server: another origin to the browser.
    await page.goto(
      `http://localhost:${pagePort}/#gateway=${gatewayUrl()}&token=${token()}&thread=${thread}`,
    );
    await page.getByLabel('Message').fill('run `echo foreign >> g.txt`');
    await page.getByRole('button', { name: 'Send' }).click();
    await until(
      'the refusal on the page',
      async () => ((await page.locator('#errors').textContent()) ?? '') !== '',
    );
    expect(await page.locator('.interrupt').count()).toBe(0);
    // Nothing was started in the person's name.
    const absent = await new WebClient(`http://127.0.0.1:${stack.port}`, { bearer: token() }).request(
      'GET',
      `/sessions/${thread}`,
    );
    expect(absent.status).toBe(404);
    await page.close();
  });
});
