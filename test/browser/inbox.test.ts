/**
 * The web app as people use it, in Chromium at 1280×800 and 390×844: the welcome, a conversation, and "Needs you"
 * cleared from a phone: decisions from a web conversation, a Slack thread, a Discord channel and a mission run,
 * for two people (Alice is one person across channels; Bob approves), approved in one batch after one confirmation.
 * Every screen passes axe-core with no serious or critical violation; bad input is said next to the composer.
 * Screenshots go to test/artifacts/.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateQuery, type SessionView } from '../../workflows/session/contract';
import { launchBrowser } from '../helpers/browser';
import { DiscordKeys, DiscordRequests } from '../helpers/discord-requests';
import { FAKE_CHANNEL, FakeDiscord } from '../helpers/fake-discord';
import { FakeSlack } from '../helpers/fake-slack';
import { mention, SlackRequests } from '../helpers/slack-requests';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

const ARTIFACTS = path.resolve(__dirname, '../artifacts');
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const SECRET = 'slack-signing-secret-for-the-browser-inbox';
const ALICE_DISCORD = '100000000000000007';
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

let env: TestWorkflowEnvironment;
let slack: FakeSlack;
let discord: FakeDiscord;
let stack: Stack;
let browser: Browser;
const keys = new DiscordKeys();

beforeAll(async () => {
  env = await startTestTemporal();
  [slack, discord] = await Promise.all([new FakeSlack().start(), new FakeDiscord().start()]);
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      approvers: ['bob'],
      users: { alice: { slack: ['U1'], discord: [ALICE_DISCORD] } },
      // An outbound post nobody decides within 2 s is put to Dave too.
      tools: { http_request: { policy: 'ask', escalate: { after: '2s', to: ['dave'] } } },
    },
    env: {
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: `${slack.url}/api/`,
      DISCORD_BOT_TOKEN: 'discord-bot-token-for-tests',
      DISCORD_PUBLIC_KEY: keys.publicKeyHex,
      DISCORD_API_URL: discord.url,
    },
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await Promise.all([slack?.stop(), discord?.stop()]);
  await env?.teardown();
});

/** A person's browser: the signing-in proxy's header names them; CSP bypassed only so axe-core can be injected. */
async function personAt(
  user: string,
  viewport: { width: number; height: number },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport,
    bypassCSP: true,
    extraHTTPHeaders: { 'x-forwarded-user': user },
  });
  const page = await context.newPage();
  await page.goto(`http://127.0.0.1:${stack.port}/`);
  await expect.poll(() => page.getByTestId('signed-in-as').textContent()).toBe(`Signed in as @${user}`);
  return { context, page };
}

/** axe-core's serious and critical violations on the page as it is now (none is the bar). */
async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  // Browser code as text: this file is type-checked for Node, not the DOM.
  const violations = (await page.evaluate('axe.run(document).then((result) => result.violations)')) as {
    id: string;
    impact: string;
    nodes: { target: string[] }[];
  }[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

const toolResults = async (workflowId: string) =>
  ((await env.client.workflow.getHandle(workflowId).query(stateQuery)) as SessionView).transcript.filter(
    (m) => m.role === 'tool',
  );

describe('the web app in a browser', () => {
  it('welcomes a newcomer with prompts that work, and starts a titled conversation from one', async () => {
    const { context, page } = await personAt('alice', DESKTOP);
    await expect.poll(() => page.getByTestId('example-prompt').count()).toBe(4);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(ARTIFACTS, 'welcome.png') });
    await page.getByTestId('example-prompt').filter({ hasText: 'run `ls -la`' }).click();
    await page.waitForURL(/#.+/);
    const call = page.getByTestId('tool-call').last();
    await call.getByTestId('approve').waitFor();
    expect(await call.getByTestId('gate-outcome').textContent()).toBe('Who may decide: @alice, @bob.');
    await expect.poll(() => page.getByTestId('session-link').first().textContent()).toContain('run `ls -la`');
    expect(await accessibilityProblems(page)).toEqual([]);

    // Too long a message is said beside the composer, in the person's terms, and the text stays.
    const long = 'x'.repeat(20_001);
    await page.getByTestId('message-input').fill(long);
    await page.getByTestId('send').click();
    await expect
      .poll(() => page.getByTestId('composer-error').textContent())
      .toBe('This message has 20,001 characters; the limit is 20,000. Shorten it, or split it in two.');
    expect(await page.getByTestId('message-input').inputValue()).toBe(long);
    await page.screenshot({ path: path.join(ARTIFACTS, 'composer-error.png') });

    // The back button leaves the conversation for the welcome again; forward comes back.
    const conversation = page.url();
    await page.goBack();
    await page.getByTestId('welcome').waitFor();
    await page.goForward();
    await expect.poll(() => page.url()).toBe(conversation);
    await page.getByTestId('tool-call').last().getByTestId('approve').click();
    await expect
      .poll(() => page.getByTestId('tool-call').last().getByTestId('tool-result').textContent())
      .toContain('exit code 0');
    await context.close();
  });

  it('hands an approval to another person and escalates one nobody decided, each decided from an inbox', async () => {
    await stack.web.say('browser-handover', 'run `echo handed`');
    await stack.web.pendingGate('browser-handover');
    const bob = await personAt('bob', DESKTOP);
    await bob.page.goto(`http://127.0.0.1:${stack.port}/#/inbox`);
    const handed = bob.page.getByTestId('inbox-item').filter({ hasText: 'echo handed' });
    await handed.getByTestId('inbox-delegate-to').fill('carol');
    await handed.getByTestId('inbox-delegate').click();
    await expect.poll(() => bob.page.getByTestId('inbox-report').textContent()).toBe('1 handed to @carol.');
    // Bob's approval went with it: he may still deny (a configured approver), no longer approve.
    await expect.poll(() => handed.getByTestId('inbox-approve').count()).toBe(0);

    const carol = await personAt('carol', PHONE);
    await carol.page.goto(`http://127.0.0.1:${stack.port}/#/inbox`);
    const mine = carol.page.getByTestId('inbox-item').filter({ hasText: 'echo handed' });
    await expect.poll(() => mine.getByTestId('inbox-rule').textContent()).toContain('@carol');
    expect(await accessibilityProblems(carol.page)).toEqual([]);
    await carol.page.screenshot({
      path: path.join(ARTIFACTS, 'inbox-handed-over-phone.png'),
      fullPage: true,
    });
    await mine.getByTestId('inbox-approve').click();
    await expect.poll(() => carol.page.getByTestId('inbox-report').textContent()).toBe('1 approved.');
    const [result] = await until('the handed-over call to run', async () => {
      const results = await toolResults('session:web:browser-handover');
      return results.length ? results : undefined;
    });
    expect(JSON.stringify(result)).toContain('handed');

    // Escalation: Dave is not asked at first; after 2 s undecided, the approval is pushed to his open inbox.
    const dave = await personAt('dave', DESKTOP);
    await dave.page.goto(`http://127.0.0.1:${stack.port}/#/inbox`);
    await dave.page.getByTestId('inbox').waitFor();
    await stack.web.say('browser-escalated', 'post https://example.invalid hello');
    await stack.web.pendingGate('browser-escalated');
    const escalated = dave.page.getByTestId('inbox-item').filter({ hasText: 'http_request' });
    await expect.poll(() => escalated.count(), { timeout: 20_000 }).toBe(1);
    await escalated.getByTestId('inbox-reason').fill('not this week');
    await escalated.getByTestId('inbox-deny').click();
    await expect.poll(() => dave.page.getByTestId('inbox-report').textContent()).toBe('1 denied.');
    const [denied] = await until('the escalated call denied', async () => {
      const results = await toolResults('session:web:browser-escalated');
      return results.length ? results : undefined;
    });
    expect(denied).toMatchObject({ status: 'denied' });
    expect(JSON.stringify(denied)).toContain('not this week');
    for (const person of [bob, carol, dave]) await person.context.close();
  });

  it('archives a conversation from its header, and brings it back from Archived', async () => {
    await stack.web.say('browser-archive', 'hello from the archive test');
    await stack.web.answered('browser-archive');
    const { context, page } = await personAt('alice', DESKTOP);
    await page.goto(`http://127.0.0.1:${stack.port}/#browser-archive`);
    const link = page.getByTestId('session-link').filter({ hasText: 'hello from the archive test' });
    await link.waitFor();
    await page.getByTestId('archive').click();
    await expect.poll(() => link.count()).toBe(0);
    await expect.poll(() => page.getByTestId('show-archived').textContent()).toBe('Archived (1)');
    await page.getByTestId('show-archived').click();
    await link.waitFor();
    // Also once the list is read again from the server (visibility may lag a moment behind the click).
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await link.waitFor();
    expect(await page.getByTestId('archive').textContent()).toBe('Unarchive');
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(ARTIFACTS, 'archived.png') });
    await page.getByTestId('archive').click();
    await expect.poll(() => link.count()).toBe(0); // back among the others, which this view does not show
    await page.getByTestId('show-archived').click();
    await link.waitFor();
    // Reloaded, the server's list says the same.
    await page.reload();
    await link.waitFor();
    expect(await page.getByTestId('archive').textContent()).toBe('Archive');
    await context.close();
  });

  it('clears a mixed inbox of web, Slack, Discord and mission decisions from a phone, in one batch', async () => {
    // Alice's waits, one per channel, and a question she must answer in its conversation.
    await stack.web.say('phone-web', 'run `echo from-web`');
    await stack.web.pendingGate('phone-web');
    const event = mention('run `echo from-slack`');
    expect((await slackRequests().event(event)).status).toBe(200);
    expect((await discordRequests().ask(FAKE_CHANNEL, ALICE_DISCORD, 'run `echo from-discord`')).status).toBe(
      200,
    );
    await stack.web.say(
      'phone-owner',
      'call mission_create {"name": "nightly", "goal": "run `echo from-mission`", "cadence": "manual"}',
    );
    await stack.web.answered('phone-owner');
    await stack.web.say('phone-owner', 'call mission_fire "nightly"');
    await stack.web.say('phone-question', 'ask one');
    await stack.web.pendingGate('phone-question');

    const { context, page } = await personAt('bob', PHONE);
    await page.goto(`http://127.0.0.1:${stack.port}/#/inbox`);
    await expect.poll(() => page.getByTestId('inbox-item').count(), { timeout: 30_000 }).toBe(5);
    await expect.poll(() => page.title()).toBe('(5) Agent · web chat');
    const channels = await page
      .getByTestId('inbox-item')
      .evaluateAll((items) => items.map((i) => i.getAttribute('data-channel')).sort());
    expect(channels).toEqual(['discord', 'mission', 'slack', 'web', 'web']);
    // One column: nothing scrolls sideways on a 390 px screen.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(ARTIFACTS, 'inbox-phone.png'), fullPage: true });

    // The Slack thread, read here by someone who may decide in it: read-only, the decision is made in the inbox.
    await page.locator('[data-testid="inbox-item"][data-channel="slack"]').getByTestId('inbox-open').click();
    await expect.poll(() => page.getByTestId('tool-args').first().textContent()).toContain('echo from-slack');
    expect(await page.getByTestId('approve').count()).toBe(0);
    expect(await page.getByTestId('message-input').count()).toBe(0);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(ARTIFACTS, 'slack-thread-read-on-phone.png') });
    await page.goBack();
    await page.getByTestId('inbox-select-all').waitFor();

    await page.getByTestId('inbox-select-all').check();
    await page.getByTestId('inbox-approve-selected').click();
    const dialog = page.getByTestId('inbox-confirm');
    await expect.poll(() => dialog.locator('li').count()).toBe(4); // the question is answered in its form
    await page.screenshot({ path: path.join(ARTIFACTS, 'inbox-confirm-phone.png') });
    await page.getByTestId('inbox-confirm-yes').click();
    await expect.poll(() => page.getByTestId('inbox-report').textContent()).toBe('4 approved.');
    await expect.poll(() => page.getByTestId('inbox-item').count()).toBe(1);
    await expect.poll(() => page.title()).toBe('(1) Agent · web chat');
    for (const workflowId of [
      'session:web:phone-web',
      `session:slack:T1:C1:${event.ts}`,
      `session:discord:${FAKE_CHANNEL}`,
    ])
      await until(`the call in ${workflowId}`, async () => (await toolResults(workflowId)).length === 1);
    await stack.web.waitFor(
      'phone-owner',
      (v) => v.transcript.some((m) => m.role === 'assistant' && m.text.startsWith('**nightly** (run 1)')),
      'the mission run finished',
    );

    // The drawer on a phone: the menu opens it, a link in it closes it.
    const drawer = () => page.evaluate('getComputedStyle(document.getElementById("sidebar")).visibility');
    await page.getByTestId('menu').click();
    await expect.poll(drawer).toBe('visible');
    await page.getByTestId('inbox-link').click();
    await expect.poll(drawer).toBe('hidden');
    // The question opens in its conversation (the person may decide there); the back button returns.
    const question = page.getByTestId('inbox-item').filter({ hasText: 'ask one' });
    await question.getByTestId('inbox-open').click();
    await page.getByTestId('question-gate').waitFor();
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(ARTIFACTS, 'question-phone.png') });
    await page.goBack();
    await page.getByTestId('inbox').waitFor();

    // Or answered right here, with the same form; then an approval edited and approved from the inbox.
    // Pushed, not polled: the new approval arrives over the stream, with no request for the list.
    let listReads = 0;
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/api/inbox') listReads++;
    });
    await stack.web.say('phone-edit', 'run `echo before-edit`');
    await expect.poll(() => page.getByTestId('inbox-item').count(), { timeout: 15_000 }).toBe(2);
    expect(listReads).toBe(0);
    expect(await accessibilityProblems(page)).toEqual([]);
    await question.locator('[data-testid="option"][value="production"]').check();
    await question.getByTestId('submit-answers').click();
    await expect.poll(() => page.getByTestId('inbox-report').textContent()).toBe('Answer sent.');
    await stack.web.waitFor(
      'phone-question',
      (v) =>
        v.status === 'idle' &&
        v.transcript.some((m) => m.role === 'tool' && m.content.includes('production')),
      'the answer given in the inbox',
    );
    const edit = page.getByTestId('inbox-item').filter({ hasText: 'before-edit' });
    await edit.getByTestId('edit').click();
    await edit.getByTestId('edit-args').fill('{"command": "echo after-edit"}');
    await page.screenshot({ path: path.join(ARTIFACTS, 'inbox-edit-phone.png'), fullPage: true });
    await edit.getByTestId('edit-submit').click();
    await expect.poll(() => page.getByTestId('inbox-report').textContent()).toBe('1 approved as edited.');
    const [result] = await until('the edited call to run', async () => {
      const results = await toolResults('session:web:phone-edit');
      return results.length ? results : undefined;
    });
    expect(JSON.stringify(result)).toContain('after-edit');
    await expect.poll(() => page.getByTestId('inbox-item').count()).toBe(0);
    await expect.poll(() => page.title()).toBe('Agent · web chat');
    await context.close();
  });
});

function slackRequests() {
  return new SlackRequests(`http://127.0.0.1:${stack.port}`, SECRET);
}
function discordRequests() {
  return new DiscordRequests(`http://127.0.0.1:${stack.port}`, keys);
}
