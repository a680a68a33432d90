/**
 * Nothing acknowledged and then lost: messages and clicks that arrive while Temporal is down (or before any
 * worker has prepared a brand-new server) either take effect exactly once later, or their sender is told.
 * Real processes, a real Temporal dev server that is stopped and started again on its database file, and
 * requests signed exactly as Slack and Discord sign them.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import { findTemporalCli } from '../../infra/temporal/cli';
import { AgentOwner } from '../../common/search-attributes';
import { Sessions, WEB_DEADLINE_MS } from '../../gateways/sessions';
import { stateQuery, type SessionView } from '../../workflows/session/contract';
import { tempDir, testEnv } from '../helpers/config';
import { DiscordKeys, DiscordRequests } from '../helpers/discord-requests';
import { FAKE_BOT_USER, FAKE_CHANNEL, FakeDiscord } from '../helpers/fake-discord';
import { FakeSlack } from '../helpers/fake-slack';
import {
  freePort,
  gatewayProcess,
  gatewayReady,
  workerProcess,
  workerReady,
  type ManagedProcess,
} from '../helpers/processes';
import { click, mention, SlackRequests } from '../helpers/slack-requests';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';
import { Tally } from './summary';

const SECRET = 'slack-signing-secret-for-outage-tests';
const REQUESTER = '100000000000000001';
const COMMAND = 'run `echo ran >> count.txt; echo outage-ok`';

let env: TestWorkflowEnvironment | undefined;
let stack: Stack | undefined;
let slack: FakeSlack | undefined;
let discord: FakeDiscord | undefined;
const processes: ManagedProcess[] = [];

afterEach(async () => {
  await stack?.stop();
  stack = undefined;
  await Promise.all(processes.splice(0).map((p) => p.kill('SIGTERM')));
  await slack?.stop();
  slack = undefined;
  await discord?.stop();
  discord = undefined;
});
afterAll(async () => {
  await env?.teardown();
});

/** A dev server as a fresh install has it: no custom search attributes registered by anyone yet. */
async function bareTemporal(): Promise<TestWorkflowEnvironment> {
  const cli = findTemporalCli(process.env.TEMPORAL_CLI_PATH);
  return await TestWorkflowEnvironment.createLocal({
    server: {
      executable: cli ? { type: 'existing-path', path: cli } : { type: 'cached-download' },
      log: { format: 'pretty', level: 'error' },
    },
  });
}

const slackWorkflowId = (ts: string) => `session:slack:T1:C1:${ts}`;
const postsIn = (ts: string) => slack!.of('chat.postMessage').filter((m) => m.thread_ts === ts);
const userMessages = async (client: TestWorkflowEnvironment['client'], workflowId: string) =>
  ((await client.workflow.getHandle(workflowId).query(stateQuery)) as SessionView).transcript.filter(
    (m) => m.role === 'user',
  ).length;

/** Re-sends until the gateway, reconnected to the restarted server, takes it (what Slack's retries do). */
async function resend(send: () => Promise<{ status: number }>): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const status = (await send().catch(() => ({ status: 0 }))).status;
    if (status === 200 || status === 202 || attempt > 50) return status;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('outage: nothing acknowledged and then lost', () => {
  it('takes a Slack mention, a click, a web message and Discord messages sent while Temporal is down exactly once, or says so', async () => {
    const tally = new Tally();
    const dbFilename = path.join(tempDir('agent-temporal-db-'), 'temporal.sqlite');
    const port = await freePort();
    env = await startTestTemporal({ dbFilename, port });
    slack = await new FakeSlack().start();
    discord = await new FakeDiscord().start();
    const keys = new DiscordKeys();
    stack = await startStack({
      temporalAddress: env.address,
      env: {
        SLACK_BOT_TOKEN: 'xoxb-test-token',
        SLACK_SIGNING_SECRET: SECRET,
        SLACK_API_URL: `${slack.url}/api/`,
        DISCORD_BOT_TOKEN: 'discord-bot-token-for-tests',
        DISCORD_PUBLIC_KEY: keys.publicKeyHex,
        DISCORD_API_URL: discord.url,
      },
    });
    const requests = new SlackRequests(`http://127.0.0.1:${stack.port}`, SECRET);
    const discordRequests = new DiscordRequests(`http://127.0.0.1:${stack.port}`, keys);

    // A prompt is waiting for a click when the server goes away.
    const prompted = mention(COMMAND);
    await requests.event(prompted);
    const prompt = await until('an approval prompt', () =>
      postsIn(prompted.ts).find((m) => Array.isArray(m.blocks)),
    );
    const blocks = prompt.blocks as { type: string; elements?: { action_id: string; value: string }[] }[];
    const approve = blocks
      .find((b) => b.type === 'actions')!
      .elements!.find((e) => e.action_id === 'gate_approve')!.value;

    await env.teardown();

    // Slack: the mention is not acknowledged (Slack will retry); the click is answered, telling the clicker.
    const outage = mention('hello during the outage');
    const refused = await requests.event(outage);
    tally.check(refused.status >= 500, () => `mention during the outage answered ${refused.status}`);
    // Slack's last retry is not answered with another error (there is no next one): the sender is told.
    const lastTry = mention('hello on the last retry');
    const last = await requests.event(lastTry, { retryNum: 3 });
    tally.check(last.status === 200, () => `last retry answered ${last.status}`);
    tally.check(
      postsIn(lastTry.ts).some((m) => /<@U1> I could not take your message/.test(String(m.text))),
      () => 'the sender was not told after the last retry',
    );
    const clicked = await requests.interaction(
      click('gate_approve', approve, 'U1', `${slack.url}/response/1`),
    );
    tally.check(clicked.status === 200, () => `click during the outage answered ${clicked.status}`);
    const told = slack
      .of('response_url')
      .some((r) => /could not be recorded.*try again/i.test(String(r.text)));
    tally.check(told, () => 'the clicker was not told the click was not recorded');

    // The web chat: 503 with a "try again", not a 500.
    const web = await stack.web.say('outage', 'hello from the web');
    tally.check(
      web.status === 503 && /try again/i.test(String(web.body?.error)),
      () => `web message during the outage answered ${web.status} ${JSON.stringify(web.body)}`,
    );

    // Discord: an /agent ask and a mention are answered with "not delivered, send it again".
    const asked = await discordRequests.ask(FAKE_CHANNEL, REQUESTER, 'ask during the outage');
    tally.check(
      /could not be delivered/.test(String(asked.json.data?.content)),
      () => `/agent ask during the outage answered ${asked.text}`,
    );
    discord.sendMessage({
      channelId: FAKE_CHANNEL,
      authorId: REQUESTER,
      content: `<@${FAKE_BOT_USER}> mention during the outage`,
      mentionBot: true,
    });
    const notice = await until('the Discord sender told', () =>
      discord!
        .of('POST', new RegExp(`^/channels/${FAKE_CHANNEL}/messages$`))
        .find((c) => /could not take your message/.test(JSON.stringify(c.body))),
    );
    tally.check(
      (notice.body as { message_reference?: unknown }).message_reference !== undefined,
      () => 'the Discord notice is not a reply to the message',
    );

    env = await startTestTemporal({ dbFilename, port });

    // Slack retries the mention (twice, as it may); the clicker clicks again.
    const retried = await resend(() => requests.event(outage, { retryNum: 1 }));
    tally.check(retried === 200, () => `retried mention answered ${retried}`);
    const again = await requests.event(outage, { retryNum: 2 });
    tally.check(again.status === 200, () => `second retry answered ${again.status}`);
    const reclicked = await resend(() =>
      requests.interaction(click('gate_approve', approve, 'U1', `${slack!.url}/response/2`)),
    );
    tally.check(reclicked === 200, () => `click after the outage answered ${reclicked}`);
    const resent = await resend(() => stack!.web.say('outage', 'hello from the web'));
    tally.check(resent === 202, () => `web message after the outage answered ${resent}`);

    const answered = await until('the mention answered', () =>
      postsIn(outage.ts).find((m) => String(m.text).includes('You said: "hello during the outage"')),
    ).catch(() => undefined);
    if (!answered) tally.lost++;
    // After a server restart, a loaded machine's worker may take a while to be back at work: two minutes.
    const tool = await until(
      'the approved tool answered',
      () => postsIn(prompted.ts).find((m) => String(m.text).includes('outage-ok') && !m.blocks),
      { timeoutMs: 120_000 },
    ).catch(() => undefined);
    if (!tool) tally.lost++;
    const taken = await userMessages(env.client, slackWorkflowId(outage.ts));
    tally.check(taken === 1, () => `the retried mention was taken ${taken} times`);
    tally.check(
      postsIn(outage.ts).filter((m) => String(m.text).includes('You said')).length === 1,
      () => 'the mention was answered more than once',
    );
    const file = path.join(sessionWorkdir(stack.env.DATA_DIR!, slackWorkflowId(prompted.ts)), 'count.txt');
    const runs = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
    tally.check(runs === 1, () => `the approved tool ran ${runs} times`);
    tally.finish('outage: messages acknowledged then lost');
  }, 300_000);

  it('answers a mention sent to a brand-new server before any worker has started, once a worker comes up', async () => {
    await env?.teardown();
    env = await bareTemporal();
    slack = await new FakeSlack().start();
    const port = await freePort();
    const config = testEnv(
      {},
      {
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_TASK_QUEUE: `outage-${port}`,
        PORT: String(port),
        WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
        WEB_CHAT: 'off',
        LOG_LEVEL: 'info',
        SLACK_BOT_TOKEN: 'xoxb-test-token',
        SLACK_SIGNING_SECRET: SECRET,
        SLACK_API_URL: `${slack.url}/api/`,
      },
    );
    const gateway = gatewayProcess(config);
    processes.push(gateway);
    await gateway.start(gatewayReady(port));
    const requests = new SlackRequests(`http://127.0.0.1:${port}`, SECRET);

    const first = mention('hello, new server');
    expect((await requests.event(first)).status).toBe(200);

    const worker = workerProcess(config);
    processes.push(worker);
    await worker.start(workerReady);
    await until('the answer', () =>
      postsIn(first.ts).find((m) => String(m.text).includes('You said: "hello, new server"')),
    );
  });

  it('registers the search attributes itself when a first message reaches a server nobody has prepared', async () => {
    await env?.teardown();
    env = await bareTemporal();
    await new Sessions(env.client, 'nobody-listens', 'web', WEB_DEADLINE_MS).start(
      'session:web:first',
      { messageId: 'm1', userId: 'alice', text: 'hello' },
      'first',
    );
    const description = await env.client.workflow.getHandle('session:web:first').describe();
    expect(description.typedSearchAttributes.get(AgentOwner)).toBe('alice');
  });
});
