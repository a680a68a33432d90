/**
 * Sign-in mode in a real browser against a real OpenID Connect provider (oidc-provider): a person signs in,
 * chats, approves a command, and signs out; a name shaped like a Slack id never becomes that Slack user; the
 * users table makes one person one identity across channels.
 */
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tally } from '../chaos/summary';
import { launchBrowser } from '../helpers/browser';
import { OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, TestOidcProvider } from '../helpers/oidc-provider';
import { freePort } from '../helpers/processes';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';

const ARTIFACTS = path.resolve(__dirname, '../artifacts');
let env: TestWorkflowEnvironment;
let oidc: TestOidcProvider;
let stack: Stack;
let browser: Browser;
let base: string;

beforeAll(async () => {
  env = await startTestTemporal();
  const port = await freePort();
  base = `http://localhost:${port}`;
  oidc = await new TestOidcProvider().start(`${base}/auth/callback`);
  stack = await startStack({
    temporalAddress: env.address,
    port,
    policy: {
      providers: { corp: { type: 'oauth2', displayName: 'Corp SSO', issuer: oidc.issuer } },
      users: { alice: { sub: ['alice'], slack: ['U0ALICE01'] } },
    },
    env: {
      WEB_LOGIN: 'corp',
      // Only named accounts get in (eve, below, is not one of them).
      WEB_ALLOWED_USERS: 'alice,mallory.as.alice,U0ALICE01',
      PUBLIC_URL: base,
      OAUTH_CORP_CLIENT_ID: OIDC_CLIENT_ID,
      OAUTH_CORP_CLIENT_SECRET: OIDC_CLIENT_SECRET,
    },
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await oidc?.stop();
  await env?.teardown();
});

/** Through the provider's own pages: its login form, then its consent page; back at the chat. */
async function signIn(page: Page, login: string): Promise<void> {
  await throughProvider(page, login);
  await page.waitForURL(`${base}/`);
}

async function throughProvider(page: Page, login: string): Promise<void> {
  await page.goto(`${base}/`);
  await page.getByTestId('sign-in').click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.locator('button[type="submit"]').click();
  await page.locator('button[type="submit"]', { hasText: 'Continue' }).click();
}

describe('sign-in with OpenID Connect', () => {
  it('signs a person in, lets them chat and approve, and signs them out', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/`);
    await expect.poll(() => page.getByTestId('banner').textContent()).toContain('Sign in');
    expect((await page.request.get(`${base}/api/me`)).status()).toBe(401);

    await signIn(page, 'alice');
    await expect.poll(() => page.getByTestId('signed-in-as').textContent()).toBe('Signed in as @alice');
    await page.getByTestId('new-session').click();
    await page.getByTestId('message-input').fill('run `echo signed-in`');
    await page.getByTestId('send').click();
    const call = page.getByTestId('tool-call').last();
    await call.getByTestId('approve').click();
    await expect.poll(() => call.getByTestId('tool-result').textContent()).toContain('signed-in');
    await expect.poll(() => call.getByTestId('gate-outcome').textContent()).toMatch(/Approved by @alice/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'signed-in-chat.png') });

    // The session cookie is HttpOnly, SameSite=Strict and expires.
    const cookie = (await page.context().cookies()).find((c) => c.name === 'agent_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(cookie.expires).toBeGreaterThan(Date.now() / 1000);

    await page.getByTestId('sign-out').click();
    await expect.poll(() => page.getByTestId('sign-in').count()).toBe(1);
    expect((await page.request.get(`${base}/api/me`)).status()).toBe(401);
    await page.close();
  });

  it('decides who someone is by the subject alone: a chosen username or a Slack-shaped one is nobody else', async () => {
    const page = await browser.newPage();
    // Mallory picked "alice" as her username at the provider: she is still only herself.
    await signIn(page, 'mallory.as.alice');
    await expect
      .poll(() => page.getByTestId('signed-in-as').textContent())
      .toBe('Signed in as @corp:mallory.as.alice');
    const listed = JSON.stringify(await (await page.request.get(`${base}/api/sessions`)).json());
    expect(listed).toContain('"sessions"');
    expect(listed).not.toContain('alice');
    await page.close();
    const other = await browser.newPage();
    await signIn(other, 'U0ALICE01');
    await expect
      .poll(() => other.getByTestId('signed-in-as').textContent())
      .toBe('Signed in as @corp:U0ALICE01');
    await other.close();
  });

  it('refuses an account the operator did not name, even though the provider signed it in', async () => {
    const tally = new Tally();
    for (const login of ['eve', 'alice.as.eve', 'U0ALICE02']) {
      const page = await browser.newPage();
      await throughProvider(page, login);
      await page.waitForURL(/\/auth\/callback/);
      const text = await page.locator('body').textContent();
      const me = await page.request.get(`${base}/api/me`);
      tally.attempt(
        me.status() === 401 && /may not sign in here/.test(text ?? ''),
        () => `${login} got in: /api/me ${me.status()}, page: ${text?.slice(0, 200)}`,
      );
      if (login === 'eve') await page.screenshot({ path: path.join(ARTIFACTS, 'sign-in-refused.png') });
      await page.close();
    }
    tally.finish('sign-in: accounts the operator did not name');
  });

  it('refuses a callback that this browser did not start, and a forged session cookie', async () => {
    const stray = await fetch(`${base}/auth/callback?code=x&state=y`, { redirect: 'manual' });
    expect(stray.status).toBe(400);
    expect(stray.headers.get('set-cookie') ?? '').not.toContain('agent_session=ey');
    const forged = await fetch(`${base}/api/me`, {
      headers: { cookie: 'agent_session=eyJ1IjoiYWxpY2UifQ.AAAA' },
    });
    expect(forged.status).toBe(401);
    // The local secret and the proxy header mean nothing in sign-in mode.
    expect((await fetch(`${base}/api/me`, { headers: { 'x-forwarded-user': 'alice' } })).status).toBe(401);
    expect((await fetch(`${base}/api/me`, { headers: { authorization: 'Bearer x' } })).status).toBe(401);
  });
});
