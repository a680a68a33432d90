/** The web chat in a real browser: every approval path a person clicks through. Screenshots go to test/artifacts/. */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser';
import { CLIENT_ID, CLIENT_SECRET, TestOAuthProvider } from '../helpers/oauth-provider';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';

const ARTIFACTS = path.resolve(__dirname, '../artifacts');
let env: TestWorkflowEnvironment;
let stack: Stack;
let browser: Browser;
let page: Page;
let provider: TestOAuthProvider;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  env = await startTestTemporal();
  provider = await new TestOAuthProvider().start();
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      approvers: ['bob'],
      // The scripted model estimates usage (4 characters a token): only a very long message reaches this.
      budgets: { perConversation: { tokens: 3_000 } },
      tools: { http_request: { policy: 'ask', approvalTimeout: '3s' } },
      allowHosts: [new URL(provider.apiUrl).host],
      providers: {
        acme: {
          type: 'oauth2',
          displayName: 'Acme Files',
          issuer: provider.issuer,
          apiHosts: [new URL(provider.apiUrl).host],
        },
      },
    },
    env: { OAUTH_ACME_CLIENT_ID: CLIENT_ID, OAUTH_ACME_CLIENT_SECRET: CLIENT_SECRET },
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await provider?.stop();
  await env?.teardown();
});

beforeEach(async () => {
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`http://127.0.0.1:${stack.port}/`);
  await setUser('alice');
  await page.getByTestId('new-session').click();
  await page.waitForURL(/#.+/);
});

afterEach(async () => {
  await page?.close();
});

/** The stack's gateway trusts a signing-in proxy on loopback: the browser plays that proxy's header. */
async function setUser(name: string): Promise<void> {
  await page.context().setExtraHTTPHeaders({ 'x-forwarded-user': name });
  await page.reload();
  await expect.poll(() => page.getByTestId('signed-in-as').textContent()).toBe(`Signed in as @${name}`);
  // Nothing else beside it (once, a missing Sign out button showed as the word "null").
  expect(await page.locator('#who').textContent()).toBe(`Signed in as @${name}`);
}

async function send(text: string): Promise<void> {
  await page.getByTestId('message-input').fill(text);
  await page.getByTestId('send').click();
}

const lastCall = () => page.getByTestId('tool-call').last();

describe('web chat in a browser', () => {
  it('sends a message, shows the call, approves it and shows the answer', async () => {
    await send('run `echo browser-approve`');
    const call = lastCall();
    await expect.poll(() => call.getByTestId('tool-args').textContent()).toContain('echo browser-approve');
    await expect.poll(() => page.getByTestId('status').getAttribute('data-status')).toBe('waiting_approval');
    await page.screenshot({ path: path.join(ARTIFACTS, 'approval-prompt.png') });
    await call.getByTestId('approve').click();
    await expect.poll(() => call.getByTestId('tool-result').textContent()).toContain('browser-approve');
    await expect.poll(() => page.getByTestId('assistant-message').last().textContent()).toContain('returned');
    await expect.poll(() => call.getByTestId('gate-outcome').textContent()).toMatch(/Approved by @alice/);
    const link = await page.getByTestId('temporal-link').getAttribute('href');
    expect(link).toMatch(/^http:\/\/localhost:8233\/namespaces\/default\/workflows\/session%3Aweb%3A/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'approved-answer.png') });
  });

  it('opens, starts a conversation and answers with no failed request and no error in the console', async () => {
    const failures: string[] = [];
    const fresh = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      fresh.on('response', (response) => {
        if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
      });
      fresh.on('console', (message) => {
        if (message.type() === 'error') failures.push(`console: ${message.text()}`);
      });
      await fresh.context().setExtraHTTPHeaders({ 'x-forwarded-user': 'alice' });
      await fresh.goto(`http://127.0.0.1:${stack.port}/`);
      await fresh.getByTestId('new-session').click();
      await fresh.waitForURL(/#.+/);
      await fresh.getByTestId('message-input').fill('hello there');
      await fresh.getByTestId('send').click();
      await expect
        .poll(() => fresh.getByTestId('assistant-message').last().textContent())
        .toContain('hello there');
      expect(failures).toEqual([]);
    } finally {
      await fresh.close();
    }
  });

  it('offers the example prompts in a new conversation, and sends the one clicked there', async () => {
    const here = page.url();
    await page.getByTestId('example-prompt').filter({ hasText: 'what time is it' }).click();
    await expect
      .poll(() => page.getByTestId('assistant-message').last().textContent())
      .toContain('current_time');
    expect(page.url()).toBe(here);
    expect(await page.getByTestId('welcome').count()).toBe(0);
  });

  it('keeps a conversation’s header short on a phone', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await phone.context().setExtraHTTPHeaders({ 'x-forwarded-user': 'alice' });
      await phone.goto(page.url());
      await phone.getByTestId('message-input').fill('run `echo on-a-phone`');
      await phone.getByTestId('send').click();
      // Waiting on the approval: title, status, usage, Stop, Archive and the Temporal link all show.
      await phone.getByTestId('stop').waitFor();
      await phone.getByTestId('temporal-link').waitFor();
      const height = await phone
        .locator('.conversation-header')
        .evaluate((el) => el.getBoundingClientRect().height);
      await phone.screenshot({ path: path.join(ARTIFACTS, 'conversation-phone.png') });
      // A tenth of the screen, not a fifth (it was about 170 px).
      expect(height).toBeLessThanOrEqual(90);
    } finally {
      await phone.close();
    }
  });

  it('grows the message box with a long paste, up to a part of the window, and back after sending', async () => {
    const input = page.getByTestId('message-input');
    const height = () => input.evaluate((el) => el.getBoundingClientRect().height);
    const empty = await height();
    await input.fill(Array.from({ length: 12 }, (_, i) => `line ${i + 1} of a pasted log`).join('\n'));
    const grown = await height();
    expect(grown).toBeGreaterThan(empty * 2);
    // A paste far longer than the window: the box stops at 40 % of it and scrolls.
    await input.fill(Array.from({ length: 200 }, (_, i) => `line ${i + 1}`).join('\n'));
    const viewport = page.viewportSize()!.height;
    expect(await height()).toBeLessThanOrEqual(Math.round(viewport * 0.4) + 1);
    expect(await input.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
    await page.screenshot({ path: path.join(ARTIFACTS, 'composer-grown.png') });
    await page.getByTestId('send').click();
    await expect.poll(height).toBeLessThanOrEqual(empty + 1);
  });

  it('denies with a reason that the agent repeats', async () => {
    await send('run `echo should-not-run`');
    const call = lastCall();
    await call.getByTestId('deny-reason').fill('use the staging box');
    await call.getByTestId('deny').click();
    await expect.poll(() => call.getByTestId('result-status').textContent()).toBe('denied');
    await expect
      .poll(() => page.getByTestId('assistant-message').last().textContent())
      .toContain('use the staging box');
  });

  it('edits the arguments before approving', async () => {
    await send('run `echo before-edit`');
    const call = lastCall();
    await call.getByTestId('edit').click();
    await call.getByTestId('edit-args').fill('{"command": "echo after-edit"}');
    await call.getByTestId('edit-submit').click();
    await expect.poll(() => call.getByTestId('tool-result').textContent()).toContain('after-edit');
    await expect
      .poll(() => call.getByTestId('gate-outcome').textContent())
      .toMatch(/Edited and approved by @alice/);
  });

  it('always allows in this conversation, lists the grant, and asks again after revoking it', async () => {
    await send('run `echo always-1`');
    await lastCall().getByTestId('always').click();
    await expect.poll(() => lastCall().getByTestId('tool-result').textContent()).toContain('always-1');
    await expect.poll(() => page.getByTestId('grant').count()).toBe(1);
    await expect.poll(() => page.getByTestId('grant').first().textContent()).toContain('this conversation');

    await send('run `echo always-1`');
    await expect.poll(() => page.getByTestId('tool-call').count()).toBe(2);
    await expect.poll(() => lastCall().getByTestId('result-status').textContent()).toBe('ok');
    expect(await lastCall().getByTestId('gate').count()).toBe(0);

    await page.getByTestId('revoke').first().click();
    await expect.poll(() => page.getByTestId('grant').count()).toBe(0);
    await send('run `echo always-1`');
    await expect.poll(() => page.getByTestId('tool-call').count()).toBe(3);
    await expect.poll(() => lastCall().getByTestId('approve').count()).toBe(1);
  });

  it('always allows everywhere with a pattern, across conversations', async () => {
    await send('run `git --version`');
    await lastCall().getByTestId('grant-scope').selectOption('user');
    await lastCall().getByTestId('grant-pattern').fill('git --version*');
    await lastCall().getByTestId('always').click();
    await expect.poll(() => lastCall().getByTestId('result-status').textContent()).not.toBeNull();
    const before = page.url();
    await page.getByTestId('new-session').click();
    await page.waitForURL((url) => url.toString() !== before);
    // A new conversation starts empty: nothing of the previous one's spend, Stop or calls.
    expect(await page.getByTestId('tool-call').count()).toBe(0);
    expect(await page.getByTestId('stop').count()).toBe(0);
    await send('run `git --version`');
    await expect.poll(() => lastCall().getByTestId('result-status').textContent()).not.toBeNull();
    expect(await lastCall().getByTestId('gate').count()).toBe(0);
    await expect.poll(() => page.getByTestId('grant').first().textContent()).toContain('everywhere');
    await page.getByTestId('revoke').first().click();
    await expect.poll(() => page.getByTestId('grant').count()).toBe(0);
  });

  it('hides the conversation from someone else, then lets a configured approver decide', async () => {
    await send('run `echo guarded`');
    await expect.poll(() => lastCall().getByTestId('approve').count()).toBe(1);
    await setUser('mallory');
    // Exactly what a conversation that never started looks like: nothing says it exists.
    await expect.poll(() => page.getByTestId('banner').textContent()).toContain('Say something to start');
    expect(await page.getByTestId('tool-call').count()).toBe(0);
    expect(await page.getByTestId('session-link').count()).toBe(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'hidden-from-others.png') });
    await setUser('bob');
    await lastCall().getByTestId('approve').click();
    await expect.poll(() => lastCall().getByTestId('gate-outcome').textContent()).toMatch(/Approved by @bob/);
    await lastCall().getByTestId('tool-result').waitFor();
  });

  it('supersedes the open approval when the requester writes again', async () => {
    await send('run `echo superseded`');
    await expect.poll(() => lastCall().getByTestId('approve').count()).toBe(1);
    await send('what time is it');
    await expect
      .poll(() => page.getByTestId('tool-call').first().getByTestId('result-status').textContent())
      .toBe('superseded');
    await expect
      .poll(() => page.getByTestId('tool-call').last().getByTestId('result-status').textContent())
      .toBe('ok');
  });

  it('stops the running turn with the Stop button, which shows only while a turn runs', async () => {
    expect(await page.getByTestId('stop').isVisible()).toBe(false);
    await send('run `echo never-stopped`');
    await expect.poll(() => lastCall().getByTestId('approve').count()).toBe(1);
    await page.getByTestId('stop').click();
    await expect.poll(() => lastCall().getByTestId('result-status').textContent()).toBe('cancelled');
    await expect
      .poll(() => page.getByTestId('assistant-message').last().textContent())
      .toContain('Stopped by @alice');
    await expect.poll(() => page.getByTestId('status').getAttribute('data-status')).toBe('idle');
    await expect.poll(() => page.getByTestId('stop').isVisible()).toBe(false);
    // Said on the step's gate line; the "not run" result written for the model is not a second copy.
    expect(await lastCall().getByTestId('gate-outcome').textContent()).toMatch(/^Stopped by @alice/);
    expect(await lastCall().getByTestId('tool-result').count()).toBe(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'stopped-turn.png') });
  });

  it('shows what the conversation used, and asks before going past its budget', async () => {
    expect(await page.getByTestId('usage').textContent()).toBe('');
    await send(`summarise this: ${'lorem ipsum dolor sit amet '.repeat(500)}`);
    await expect.poll(() => page.getByTestId('status').getAttribute('data-status')).toBe('idle');
    await expect.poll(() => page.getByTestId('usage').textContent()).toMatch(/^[\d,]+ tokens$/);
    const used = Number((await page.getByTestId('usage').textContent())!.replace(/\D/g, ''));
    expect(used).toBeGreaterThan(3_000);

    await send('hello');
    const gate = page.getByTestId('budget-gate');
    await expect
      .poll(() => gate.getByTestId('budget-question').textContent())
      .toBe(
        `This conversation has used ${used.toLocaleString('en-US')} of 3,000 tokens. Continue with 3,000 tokens more?`,
      );
    // Below the message it holds, where the person is looking.
    expect(
      await page.evaluate(
        "[...document.querySelectorAll('[data-testid=user-message],[data-testid=budget-gate]')].map((e) => e.dataset.testid)",
      ),
    ).toEqual(['user-message', 'user-message', 'budget-gate']);
    await page.screenshot({ path: path.join(ARTIFACTS, 'budget-gate.png') });
    await gate.getByTestId('budget-continue').click();
    await expect.poll(() => gate.getByTestId('gate-outcome').textContent()).toMatch(/^Continued by @alice/);
    await expect.poll(() => page.getByTestId('assistant-message').last().textContent()).toContain('hello');
    await expect
      .poll(async () => Number((await page.getByTestId('usage').textContent())!.replace(/\D/g, '')))
      .toBeGreaterThan(used);
  });

  it('decides the only open approval from a typed "approve"', async () => {
    await send('run `echo typed`');
    await expect.poll(() => lastCall().getByTestId('approve').count()).toBe(1);
    await send('approve');
    await expect.poll(() => lastCall().getByTestId('tool-result').textContent()).toContain('typed');
    // Not a message to the model, but what the person typed stays where they typed it, said once.
    expect(await page.getByTestId('user-message').count()).toBe(1);
    const typed = lastCall().getByTestId('typed-reply');
    expect(await typed.count()).toBe(1);
    expect(await typed.textContent()).toMatch(/^@alice typed · .+ approve$/);
    await expect
      .poll(() => lastCall().getByTestId('gate-outcome').textContent())
      .toMatch(/Approved by @alice/);
    // The outcome is said on the step, not again in a notice above the composer.
    expect(
      await page
        .getByTestId('notice')
        .filter({ hasText: /approved by/i })
        .count(),
    ).toBe(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'typed-approve.png') });
  });

  it('shows an expired approval as expired, not denied', async () => {
    await send('post https://example.invalid hello');
    await expect.poll(() => lastCall().getByTestId('approve').count()).toBe(1);
    await expect
      .poll(() => lastCall().getByTestId('gate-outcome').textContent(), { timeout: 15_000 })
      .toMatch(/^Expired at .*: nobody decided/);
    await expect.poll(() => lastCall().getByTestId('result-status').textContent()).toBe('expired');
  });

  it('takes a double-click on Approve as one decision, with no "already approved" for it', async () => {
    await send('run `echo double`');
    await lastCall().getByTestId('approve').dblclick();
    await expect.poll(() => lastCall().getByTestId('tool-result').textContent()).toContain('double');
    await expect.poll(() => page.getByTestId('assistant-message').last().textContent()).toContain('double');
    expect(await page.getByTestId('notice').allTextContents()).not.toContainEqual(
      expect.stringContaining('already'),
    );
    expect(await page.getByTestId('tool-result').count()).toBe(1);
  });

  it('answers a click from a stale tab with who already decided, changing nothing', async () => {
    await send('run `echo once`');
    await expect.poll(() => lastCall().getByTestId('approve').count()).toBe(1);
    // A stale tab: its live updates never arrive (the stream is cut), so it still shows the open gate.
    const stale = await browser.newPage({ extraHTTPHeaders: { 'x-forwarded-user': 'alice' } });
    await stale.route('**/api/sessions/*/stream', (route) => route.abort());
    await stale.goto(page.url());
    await stale.getByTestId('approve').waitFor();

    await lastCall().getByTestId('approve').click();
    await expect.poll(() => lastCall().getByTestId('tool-result').textContent()).toContain('once');
    await stale.getByTestId('approve').click();
    await stale.unroute('**/api/sessions/*/stream');
    await stale.reload();
    await expect
      .poll(() => stale.getByTestId('notice').last().textContent())
      .toMatch(/already approved by @alice on the web at \d\d:\d\d UTC\. Nothing changed/);
    expect(await stale.getByTestId('tool-result').count()).toBe(1);
    await stale.close();
  });

  it('answers a multi-question form, refusing an incomplete one first', async () => {
    await send('ask me');
    const form = page.getByTestId('question-gate').last();
    await form.waitFor();
    await expect.poll(() => page.getByTestId('status').getAttribute('data-status')).toBe('waiting_answer');
    await form.getByTestId('submit-answers').click();
    await expect
      .poll(() => page.getByTestId('notice').last().textContent())
      .toContain('"Environment" needs an answer');

    const environment = form.locator('[data-testid="question"][data-label="Environment"]');
    const checks = page
      .getByTestId('question-gate')
      .last()
      .locator('[data-testid="question"][data-label="Checks"]');
    await environment.getByLabel('staging').check();
    await checks.getByLabel('lint').check();
    await checks.getByLabel('tests').check();
    await checks.getByTestId('custom').fill('smoke');
    await page.screenshot({ path: path.join(ARTIFACTS, 'question-form.png') });
    await page.getByTestId('question-gate').last().getByTestId('submit-answers').click();

    await expect
      .poll(() => page.getByTestId('assistant-message').last().textContent())
      .toContain('Environment: staging; Checks: lint, tests, "smoke"');
    await expect.poll(() => page.getByTestId('question-gate').last().getByTestId('answer').count()).toBe(2);
    await expect
      .poll(() => page.getByTestId('question-gate').last().getByTestId('gate-outcome').textContent())
      .toMatch(/Answered by @alice/);
  });

  it('connects an account in a new tab when a tool needs it, and the call then runs', async () => {
    await send(`fetch ${provider.apiUrl}/files with acme`);
    const call = lastCall();
    await call.getByTestId('approve').click();
    const connect = call.getByTestId('connect');
    await connect.waitFor();
    await expect
      .poll(() => page.getByTestId('status').getAttribute('data-status'))
      .toBe('waiting_credential');
    await page.screenshot({ path: path.join(ARTIFACTS, 'credential-gate.png') });
    const [signIn] = await Promise.all([page.context().waitForEvent('page'), connect.click()]);
    await signIn.waitForLoadState();
    await expect.poll(() => signIn.textContent('h1')).toBe('Acme Files is connected');
    await signIn.screenshot({ path: path.join(ARTIFACTS, 'credential-connected.png') });
    await signIn.close();
    await expect.poll(() => call.getByTestId('tool-result').textContent()).toContain('hello johndoe');
    await expect
      .poll(() => call.getByTestId('gate-outcome').last().textContent())
      .toMatch(/Acme Files connected/);
  });
});
