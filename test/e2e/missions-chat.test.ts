/**
 * Missions as a team uses them from chat, end to end: requests signed exactly as Slack and Discord sign them, the
 * platforms' APIs and the OpenID provider as local servers (the provider is a real one), a real worker, gateway and
 * Temporal server. In Slack: create and fire by name, the run's prompt naming the mission in the owner's thread,
 * resume while the run waits (it stays waiting), Deny… decided while no worker runs fails the mission with the
 * reason. In Discord: a run waiting on the owner's sign-in, connected through the real OAuth callback while no
 * worker runs, goes on after the restart and posts its result.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missionWorkflowId } from '../../common/missions/types';
import { missionViewQuery } from '../../workflows/missions/contract';
import { missionRecordsOf } from '../helpers/missions';
import { DiscordKeys, DiscordRequests, snowflake } from '../helpers/discord-requests';
import { FakeDiscord, type DiscordMessage } from '../helpers/fake-discord';
import { FakeSlack } from '../helpers/fake-slack';
import { Browser, CLIENT_ID, CLIENT_SECRET, TestOAuthProvider } from '../helpers/oauth-provider';
import { click, mention, SlackRequests, submitView, threadReply } from '../helpers/slack-requests';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until as untilDone } from '../helpers/until';

const SECRET = 'slack-signing-secret-for-missions';
const OWNER = '100000000000000001';

let env: TestWorkflowEnvironment;
let slack: FakeSlack;
let discord: FakeDiscord;
let provider: TestOAuthProvider;
let stack: Stack;
let slackRequests: SlackRequests;
let discordRequests: DiscordRequests;

beforeAll(async () => {
  env = await startTestTemporal();
  [slack, discord, provider] = await Promise.all([
    new FakeSlack().start(),
    new FakeDiscord().start(),
    new TestOAuthProvider().start(),
  ]);
  const keys = new DiscordKeys();
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      providers: {
        acme: { type: 'oauth2', displayName: 'Acme', issuer: provider.issuer, apiHosts: ['127.0.0.1:9'] },
      },
    },
    env: {
      ...slack.env(SECRET),
      DISCORD_BOT_TOKEN: 'discord-bot-token-for-tests',
      DISCORD_PUBLIC_KEY: keys.publicKeyHex,
      DISCORD_API_URL: discord.url,
      OAUTH_ACME_CLIENT_ID: CLIENT_ID,
      OAUTH_ACME_CLIENT_SECRET: CLIENT_SECRET,
    },
  });
  slackRequests = new SlackRequests(`http://127.0.0.1:${stack.port}`, SECRET);
  discordRequests = new DiscordRequests(`http://127.0.0.1:${stack.port}`, keys);
});

afterAll(async () => {
  await stack?.stop();
  await Promise.all([slack?.stop(), discord?.stop(), provider?.stop()]);
  await env?.teardown();
});

const until = <T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>) =>
  untilDone(what, probe, {
    timeoutMs: 45_000,
    context: () =>
      `Slack: ${JSON.stringify(slack.calls.map((c) => c.method))}; Discord: ${JSON.stringify(discord.calls.map((c) => `${c.method} ${c.path}`))}${stack.logTail(1_500)}`,
  });

/** The mission's id and state, as the directory and the mission workflow know them (tool results name missions only). */
async function missionNamed(name: string, ownerId: string) {
  const [record] = (await missionRecordsOf(env.client.workflow, ownerId)).filter((r) => r.name === name);
  if (!record) throw new Error(`no mission "${name}" of ${ownerId}`);
  return env.client.workflow.getHandle(missionWorkflowId(record.id)).query(missionViewQuery);
}

describe('missions from Slack', () => {
  const postsIn = (ts: string) => slack.of('chat.postMessage').filter((m) => m.thread_ts === ts);
  const textsIn = (ts: string) =>
    postsIn(ts).map((m) => `${String(m.text)} ${JSON.stringify(m.blocks ?? '')}`);

  it('creates and fires a mission by name, names it on the run’s prompt, keeps it waiting when resumed, and fails it on a Deny… decided with no worker', async () => {
    const opened = mention(
      'call mission_create {"name": "nightly", "goal": "run `echo nightly`", "cadence": "manual"}',
    );
    await slackRequests.event(opened);
    const thread = opened.ts;
    await until('the mission created', () =>
      textsIn(thread).some((t) => t.includes('Created mission "nightly"')),
    );
    await slackRequests.event(threadReply(thread, 'call mission_fire {"name": "nightly"}'));
    // The run's approval comes to the owner's thread, saying which mission asks and whom it acts as.
    const prompt = await until('the run’s prompt in the thread', () =>
      postsIn(thread).find((m) => JSON.stringify(m.blocks ?? '').includes('From the mission *nightly*')),
    );
    expect(JSON.stringify(prompt.blocks)).toContain('acting as <@U1>');
    expect(JSON.stringify(prompt.blocks)).toContain('echo nightly');
    await until('the mission waiting', async () => (await missionNamed('nightly', 'U1')).gate !== null);

    // Resumed while the run waits: the wait stays true, and a fire meanwhile starts nothing.
    await slackRequests.event(threadReply(thread, 'call mission_resume {"name": "nightly"}'));
    const resumed = await until('resumed', async () => {
      const v = await missionNamed('nightly', 'U1');
      return v.status === 'active' ? v : undefined;
    });
    expect(resumed.gate).toMatchObject({ kind: 'approval', tool: 'shell_execute' });
    await until('told it still waits', () =>
      textsIn(thread).some((t) => t.includes('run 1 still waits for') && t.includes('no new run starts')),
    );
    expect(resumed.running).not.toBeNull();

    // Deny… with a reason, decided while no worker runs: recorded, and it fails the mission once one is back.
    await stack.worker.kill('SIGKILL');
    const buttons = (
      prompt.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]
    ).find((b) => b.type === 'actions')!.elements!;
    const deny = buttons.find((b) => b.action_id === 'gate_deny')!.value;
    const before = slack.of('views.open').length;
    await slackRequests.interaction(click('gate_deny', deny, 'U1', `${slack.url}/response/m`));
    const dialog = await until('the Deny dialog', () => slack.of('views.open')[before]);
    const submitted = await slackRequests.interaction(
      submitView('gate_deny', (dialog.view as { private_metadata: string }).private_metadata, 'U1', {
        reason: { value: { type: 'plain_text_input', value: 'not tonight' } },
      }),
    );
    expect(submitted.status).toBe(200);
    await stack.restartWorker();
    // The mission fails at the Deny and cancels its run; the run's record closes when the run has ended.
    const failed = await until('the mission failed and its run ended', async () => {
      const v = await missionNamed('nightly', 'U1');
      return v.status === 'failed' && v.runs[0]?.endedAt ? v : undefined;
    });
    expect(failed.running).toBeNull();
    expect(failed.reason).toContain('not tonight');
    expect(failed.runs.map((r) => r.outcome)).toEqual(['cancelled']);
    await untilDone(
      'the owner told in the thread',
      () => textsIn(thread).some((t) => /nightly\*+\u200b? failed: .*not tonight/.test(t)),
      { timeoutMs: 30_000, context: () => JSON.stringify(textsIn(thread)).slice(-3_000) },
    );
  });
});

describe('missions from Discord', () => {
  const postedIn = (channelId: string) => discord.postedIn(channelId);
  const controls = (message: DiscordMessage) =>
    (message.components as { components?: { custom_id?: string; label?: string }[] }[]).flatMap(
      (row) => row.components ?? [],
    );

  it('connects the owner’s account for a run through the real OAuth callback while no worker runs, and the run goes on after the restart', async () => {
    const channelId = snowflake();
    await discordRequests.ask(
      channelId,
      OWNER,
      'call mission_create {"name": "files", "goal": "fetch http://127.0.0.1:9/files with acme", "cadence": "manual"}',
    );
    await until('the mission created', () =>
      postedIn(channelId).some((m) => m.content.includes('Created mission "files"')),
    );
    await discordRequests.ask(channelId, OWNER, 'call mission_fire {"name": "files"}');
    const prompt = await until('the run’s Connect prompt', () =>
      postedIn(channelId).find((m) => controls(m).some((c) => c.label === 'Connect Acme')),
    );
    expect(prompt.content).toContain('files');
    await until('the mission waiting on the sign-in', async () => {
      const v = await missionNamed('files', OWNER);
      return v.gate?.kind === 'credential' ? v : undefined;
    });

    await stack.worker.kill('SIGKILL');
    const connect = controls(prompt).find((c) => c.label === 'Connect Acme')!.custom_id!;
    const clicked = await discordRequests.click(channelId, OWNER, connect);
    const link = (clicked.json.data as { components: { components: { url: string }[] }[] }).components[0]!
      .components[0]!.url;
    // The owner's own browser through the real provider and the gateway's callback.
    const signedIn = await new Browser().signIn(link);
    expect(signedIn.status).toBe(200);
    await stack.restartWorker();
    await until('the run’s result posted', () =>
      postedIn(channelId).some((m) => m.content.includes('**files** (run 1)')),
    );
    const done = await until('the run recorded', async () => {
      const v = await missionNamed('files', OWNER);
      return v.runs[0]?.endedAt ? v : undefined;
    });
    expect(done.gate).toBeNull();
    expect(done.runs[0]!.decisions).toEqual([
      expect.objectContaining({ tool: 'http_request', outcome: 'connected', by: OWNER }),
    ]);
  });
});
