/**
 * The Discord gateway end to end: interactions signed with a test Ed25519 key exactly as Discord signs
 * them, a local Discord REST API out, a real worker, gateway and Temporal server in between.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { MessageFlags } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import { credentialProvidedSignal, stateQuery, type SessionView } from '../../workflows/session/contract';
import { DiscordKeys, DiscordRequests, snowflake, type InteractionReply } from '../helpers/discord-requests';
import {
  FAKE_BOT_USER,
  FAKE_CHANNEL,
  FAKE_THREAD,
  FakeDiscord,
  type DiscordMessage,
} from '../helpers/fake-discord';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until as untilDone } from '../helpers/until';

const BOT_TOKEN = 'discord-bot-token-for-tests';
const REQUESTER = '100000000000000001';
const STRANGER = '100000000000000002';
const APPROVER = '100000000000000003';

let env: TestWorkflowEnvironment;
let discord: FakeDiscord;
let stack: Stack;
let keys: DiscordKeys;
let requests: DiscordRequests;

beforeAll(async () => {
  env = await startTestTemporal();
  discord = await new FakeDiscord().start();
  keys = new DiscordKeys();
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      approvers: [APPROVER],
      providers: {
        acme: {
          type: 'oauth2',
          displayName: 'Acme',
          issuer: 'https://id.acme.example',
          apiHosts: ['api.acme.example'],
        },
      },
    },
    env: {
      OAUTH_ACME_CLIENT_ID: 'acme-client',
      DISCORD_BOT_TOKEN: BOT_TOKEN,
      DISCORD_PUBLIC_KEY: keys.publicKeyHex,
      DISCORD_API_URL: discord.url,
    },
  });
  requests = new DiscordRequests(`http://127.0.0.1:${stack.port}`, keys);
  // The gateway answers HTTP first; its Discord Gateway connection (for mentions) follows moments later.
  await until("the gateway connected to Discord's Gateway", () => discord.gatewayConnected);
});

afterAll(async () => {
  await stack?.stop();
  await discord?.stop();
  await env?.teardown();
});

const workflowIdOf = (channelId: string) => `session:discord:${channelId}`;
const state = (channelId: string) =>
  env.client.workflow.getHandle(workflowIdOf(channelId)).query(stateQuery) as Promise<SessionView>;

const until = <T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
) =>
  untilDone(what, probe, {
    timeoutMs,
    context: () => `Discord calls: ${JSON.stringify(discord.calls.map((c) => `${c.method} ${c.path}`))}`,
  });

interface Component {
  type: number;
  custom_id?: string;
  label?: string;
  components?: Component[];
  options?: { label: string }[];
}
const controls = (message: DiscordMessage): Component[] =>
  (message.components as Component[]).flatMap((row) => row.components ?? []);
const control = (message: DiscordMessage, label: string): string => {
  const found = controls(message).find((c) => c.label === label || c.custom_id?.startsWith(label));
  if (!found?.custom_id) throw new Error(`no control ${label} on ${JSON.stringify(message.components)}`);
  return found.custom_id;
};

/** Starts a conversation with /agent ask and waits for the gate prompt it leads to (a copy: edits come later). */
async function prompted(text: string, channelId = snowflake()) {
  const asked = await requests.ask(channelId, REQUESTER, text);
  expect(asked.json.type).toBe(4);
  const message = await until('a prompt with components', () =>
    discord.postedIn(channelId).find((m) => m.components.length > 0),
  );
  return { channelId, message: structuredClone(message) };
}

/**
 * What a clicker is told privately: in the interaction's reply, or, when the verdict took longer than the
 * gateway's first answer (deferred), in the follow-up on the interaction's webhook.
 */
async function privately(reply: InteractionReply, token: string): Promise<string> {
  expect(reply.status).toBe(200);
  if (reply.json.type === 4) {
    expect(reply.json.data?.flags).toBe(64);
    return String(reply.json.data?.content);
  }
  expect(reply.json).toEqual({ type: 6 });
  const followUp = await until('the private follow-up', () =>
    discord.followUps.find((f) => f.token === token),
  );
  expect(followUp.body.flags).toBe(64);
  return String(followUp.body.content);
}
const token = () => `token-${snowflake()}`;

const answerIn = (channelId: string, fragment: string) =>
  until(`an answer containing ${fragment}`, () =>
    discord.postedIn(channelId).find((m) => m.content.includes(fragment)),
  );

describe('Discord', () => {
  it('answers PING and refuses forged, stale and unsigned requests without signalling anything', async () => {
    const ping = await requests.post(
      JSON.stringify({ id: snowflake(), type: 1, application_id: '1', token: 't', version: 1 }),
    );
    expect(ping.status).toBe(200);
    expect(ping.json).toEqual({ type: 1 });

    const channelId = snowflake();
    const body = JSON.stringify({
      id: snowflake(),
      type: 2,
      channel_id: channelId,
      member: { user: { id: REQUESTER } },
      data: {
        name: 'agent',
        options: [{ name: 'ask', type: 1, options: [{ name: 'text', value: 'forged' }] }],
      },
    });
    expect((await requests.post(body, { keys: new DiscordKeys() })).status).toBe(401);
    expect((await requests.post(body, { timestamp: Math.floor(Date.now() / 1000) - 600 })).status).toBe(401);
    const unsigned = await fetch(`http://127.0.0.1:${stack.port}/discord/interactions`, {
      method: 'POST',
      body,
    });
    expect(unsigned.status).toBe(401);
    // A valid signature over a different body (a tampered body) fails too.
    const signed = keys.sign(body, Math.floor(Date.now() / 1000));
    const tampered = await fetch(`http://127.0.0.1:${stack.port}/discord/interactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signed },
      body: body.replace('forged', 'tamper'),
    });
    expect(tampered.status).toBe(401);
    await expect(env.client.workflow.getHandle(workflowIdOf(channelId)).describe()).rejects.toThrow(
      /not found/i,
    );
  });

  it('answers /agent ask in the channel through the bot token, even after a 429 from the rate limiter', async () => {
    const channelId = snowflake();
    discord.rateLimitPosts = 1;
    const asked = await requests.ask(channelId, REQUESTER, 'hello discord');
    expect(asked.status).toBe(200);
    expect(asked.json).toMatchObject({
      type: 4,
      data: { content: expect.stringContaining('hello discord') },
    });
    const answer = await answerIn(channelId, 'You said: "hello discord"');
    expect(discord.postedIn(channelId).filter((m) => m.content === answer.content)).toHaveLength(1);
    // No link previews under an answer: Discord would fetch whatever address the model wrote.
    expect(answer.flags & MessageFlags.SuppressEmbeds).toBe(MessageFlags.SuppressEmbeds);
    const posts = discord.of('POST', new RegExp(`/channels/${channelId}/messages$`));
    expect(posts.length).toBe(2); // the refused attempt, then the one that landed after retry-after
    expect(posts.every((p) => p.authorization === `Bot ${BOT_TOKEN}`)).toBe(true);
    expect((await state(channelId)).channel).toBe('discord');
  });

  it('runs the tool on Approve and edits the prompt through the bot token, never the interaction token', async () => {
    const { channelId, message } = await prompted('run `echo from-discord`');
    expect(message.content).toContain('echo from-discord');
    expect(controls(message).map((c) => c.label)).toEqual([
      'Approve',
      'Deny…',
      'Always allow “echo from-discord” here',
      'Always allow “echo from-discord” everywhere',
      'Edit & approve…',
    ]);
    for (const c of controls(message)) expect(c.custom_id!.length).toBeLessThanOrEqual(100);
    const interactionToken = `expired-interaction-token-${snowflake()}`;
    const clicked = await requests.click(channelId, REQUESTER, control(message, 'Approve'), {
      token: interactionToken,
    });
    expect(clicked.json).toEqual({ type: 6 });
    await answerIn(channelId, 'from-discord');
    const edited = await until('the prompt edited', () => {
      const m = discord.messages.get(message.id)!;
      return m.components.length === 0 && m.content.includes('approved') ? m : undefined;
    });
    expect(edited.content).toContain(`<@${REQUESTER}>`);
    const edits = discord.of('PATCH', new RegExp(`/channels/${channelId}/messages/${message.id}$`));
    expect(edits.every((e) => e.authorization === `Bot ${BOT_TOKEN}`)).toBe(true);
    // The interaction token (dead after 15 minutes) is never used: no webhook call, nowhere in history.
    expect(discord.calls.filter((c) => c.path.startsWith('/webhooks/'))).toEqual([]);
    const history = JSON.stringify(
      await env.client.workflow.getHandle(workflowIdOf(channelId)).fetchHistory(),
    );
    expect(history).not.toContain(interactionToken);
  });

  it('tells a stranger and a double click ephemerally, and changes nothing', async () => {
    const { channelId, message } = await prompted('run `echo guarded`');
    const approve = control(message, 'Approve');
    const strangerToken = token();
    const stranger = await requests.click(channelId, STRANGER, approve, { token: strangerToken });
    const told = await privately(stranger, strangerToken);
    expect(told).toMatch(/may not decide/);
    // People are named as mentions (Discord shows their names), never as bare numeric ids.
    expect(told).toContain(`<@${REQUESTER}>, <@${APPROVER}>`);
    expect(told).not.toMatch(/(^|[^<])@\d{17,20}/);
    expect((await state(channelId)).gates[0]!.status).toBe('pending');
    const approved = await requests.click(channelId, APPROVER, approve);
    expect(approved.json).toEqual({ type: 6 });
    const againToken = token();
    const again = await requests.click(channelId, REQUESTER, approve, { token: againToken });
    expect(await privately(again, againToken)).toMatch(/already approved/);
    const view = await until('the turn finished', async () => {
      const v = await state(channelId);
      return v.status === 'idle' && v.transcript.some((m) => m.role === 'tool') ? v : undefined;
    });
    expect(view.transcript.filter((m) => m.role === 'tool')).toHaveLength(1);
  });

  it('asks for a reason in a modal on Deny and tells the model', async () => {
    const { channelId, message } = await prompted('run `rm -rf /tmp/nothing`');
    const opened = await requests.click(channelId, REQUESTER, control(message, 'Deny…'));
    expect(opened.json.type).toBe(9);
    const modal = opened.json.data as {
      custom_id: string;
      components: { component: { custom_id: string } }[];
    };
    expect(modal.components[0]!.component.custom_id).toBe('reason');
    const submitted = await requests.submit(channelId, REQUESTER, modal.custom_id, {
      reason: 'not on my machine',
    });
    expect(submitted.json).toEqual({ type: 6 });
    const edited = await until('the prompt edited', () => {
      const m = discord.messages.get(message.id)!;
      return m.content.includes('not on my machine') ? m : undefined;
    });
    expect(edited.content).toMatch(/denied/);
    const view = await until('the denial reached the model', async () => {
      const v = await state(channelId);
      return v.transcript.some((m) => m.role === 'tool' && m.status === 'denied') ? v : undefined;
    });
    expect(JSON.stringify(view.transcript)).toContain('not on my machine');
  });

  it('approves edited arguments from the Edit modal, and keeps bad JSON in the reply without approving', async () => {
    const { channelId, message } = await prompted('run `echo original`');
    const opened = await requests.click(channelId, REQUESTER, control(message, 'Edit & approve…'));
    expect(opened.json.type).toBe(9);
    const modal = opened.json.data as { custom_id: string; components: { component: { value: string } }[] };
    expect(modal.components[0]!.component.value).toContain('echo original');
    const bad = await requests.submit(channelId, REQUESTER, modal.custom_id, {
      args: '{"command": "echo edited"',
    });
    expect(bad.json).toMatchObject({
      data: { flags: 64, content: expect.stringContaining('"command": "echo edited"') },
    });
    expect((await state(channelId)).gates[0]!.status).toBe('pending');
    await requests.submit(channelId, REQUESTER, modal.custom_id, { args: '{"command": "echo edited"}' });
    await answerIn(channelId, 'edited');
    expect(
      discord.postedIn(channelId).some((m) => m.content.includes('original') && m.components.length === 0),
    ).toBe(true);
  });

  it('answers ask_user from select menus, one question at a time, and with the Other… modal', async () => {
    const { channelId, message } = await prompted('ask me');
    const selects = controls(message).filter((c) => c.type === 3);
    expect(selects.map((s) => s.options!.map((o) => o.label))).toEqual([
      ['staging', 'production'],
      ['lint', 'tests', 'build'],
    ]);
    const firstToken = token();
    const first = await requests.click(channelId, REQUESTER, selects[0]!.custom_id!, {
      values: ['staging'],
      token: firstToken,
    });
    expect(await privately(first, firstToken)).toBe('Noted. Still to answer: Checks.');
    const other = await requests.click(channelId, REQUESTER, control(message, 'Other…'));
    expect(other.json.type).toBe(9);
    const modal = other.json.data as { custom_id: string };
    const submitted = await requests.submit(channelId, REQUESTER, modal.custom_id, { '1': 'security scan' });
    expect(submitted.json).toEqual({ type: 6 });
    const thanks = await answerIn(channelId, 'Thanks!');
    expect(thanks.content).toContain('staging');
    expect(thanks.content).toContain('security scan');
    const edited = discord.messages.get(message.id)!;
    expect(edited.components).toEqual([]);
    expect(edited.content).toContain('**Environment**: staging');
  });

  it('refuses an option that is not offered, and a stranger answering, with the question still open', async () => {
    const { channelId, message } = await prompted('ask one');
    const select = controls(message).find((c) => c.type === 3)!;
    const [strangerToken, forgedToken] = [token(), token()];
    const stranger = await requests.click(channelId, STRANGER, select.custom_id!, {
      values: ['staging'],
      token: strangerToken,
    });
    expect(await privately(stranger, strangerToken)).toMatch(/may not answer/);
    const forged = await requests.click(channelId, REQUESTER, select.custom_id!, {
      values: ['moon'],
      token: forgedToken,
    });
    expect(await privately(forged, forgedToken)).toMatch(/not an option/);
    expect((await state(channelId)).gates[0]!.status).toBe('pending');
    await requests.click(channelId, REQUESTER, select.custom_id!, { values: ['production'] });
    await answerIn(channelId, 'production');
  });

  it('re-posts open gates with fresh components on /agent pending', async () => {
    const { channelId, message } = await prompted('run `echo waiting`');
    const reply = await until('pending finds the session', async () => {
      const r = await requests.pending(channelId, REQUESTER);
      return String(r.json.data?.content).includes('Re-posting') ? r : undefined;
    });
    expect(reply.json.data?.flags).toBe(64);
    const fresh = await until('a second prompt', () =>
      discord.postedIn(channelId).find((m) => m.id !== message.id && m.components.length > 0),
    );
    expect(fresh.content).toContain('Still open');
    await requests.click(channelId, REQUESTER, control(fresh, 'Approve'));
    await answerIn(channelId, 'waiting');
    // Both copies show the outcome.
    await until(
      'both prompts edited',
      () =>
        [message.id, fresh.id].every((id) => discord.messages.get(id)!.components.length === 0) || undefined,
    );
    const empty = await requests.pending(snowflake(), REQUESTER);
    expect(empty.json.data?.content).toMatch(/Nothing is waiting/);
  });

  it('stops the running turn on /agent stop, for the requester only, and says when nothing runs', async () => {
    const { channelId, message } = await prompted('run `echo never-run`');
    const stranger = await requests.stop(channelId, STRANGER);
    expect(stranger.json.data?.flags).toBe(64);
    expect(stranger.json.data?.content).toMatch(/^Stop sent: .* if you asked for it or are an approver/);
    // The stranger's stop changed nothing: the workflow refuses it.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await state(channelId)).gates[0]!.status).toBe('pending');

    await requests.stop(channelId, REQUESTER);
    await until('the gate to close as stopped', async () => {
      const view = await state(channelId);
      return view.status === 'idle' && view.gates[0]!.resolution?.outcome === 'stopped' ? view : undefined;
    });
    // The prompt is edited to say so, without buttons; the answer says who stopped the turn.
    await until(
      'the prompt edited',
      () => discord.messages.get(message.id)!.components.length === 0 || undefined,
    );
    expect(discord.messages.get(message.id)!.content).toContain('stopped');
    await answerIn(channelId, 'Stopped by');
    const idle = await requests.stop(channelId, REQUESTER);
    expect(idle.json.data?.content).toBe('Nothing is running in this channel.');
  });

  it('posts a prompt once when its worker dies after Discord created it but before Temporal heard of it', async () => {
    const channelId = snowflake();
    discord.holdPosts = true; // Discord creates the message; its answer never reaches the worker
    await requests.ask(channelId, REQUESTER, 'run `echo posted-once`');
    const prompt = await until('the prompt created', () =>
      discord.postedIn(channelId).find((m) => m.components.length > 0),
    );
    await stack.worker.kill('SIGKILL');
    discord.holdPosts = false;
    await stack.restartWorker();
    // The retried delivery carries the same nonce, so Discord hands back the first message, not a second one.
    await requests.click(channelId, REQUESTER, control(prompt, 'Approve'));
    await answerIn(channelId, 'posted-once');
    await until(
      'the prompt edited',
      () => discord.messages.get(prompt.id)!.content.includes('approved') || undefined,
    );
    // One prompt message, though its post was sent twice (the first answer lost, the retry deduplicated).
    const prompts = discord
      .of('POST', new RegExp(`/channels/${channelId}/messages$`))
      .filter((p) => ((p.body as { components?: unknown[] }).components ?? []).length > 0);
    expect(prompts).toHaveLength(2);
    expect(discord.postedIn(channelId).filter((m) => discord.createdWithComponents.has(m.id))).toEqual([
      discord.messages.get(prompt.id),
    ]);
    const posts = discord.of('POST', new RegExp(`/channels/${channelId}/messages$`));
    expect(posts.every((p) => typeof (p.body as { nonce?: unknown }).nonce === 'string')).toBe(true);
  });

  it('records clicks while no worker runs, runs the tool exactly once after a restart, and tells a refused clicker privately later', async () => {
    const { channelId, message } = await prompted('run `echo ran >> count.txt`');
    await stack.worker.kill('SIGKILL');
    const strangerToken = `token-${snowflake()}`;
    const requesterToken = `token-${snowflake()}`;
    const approve = control(message, 'Approve');
    // Answered at once (deferred) although no verdict can come; "recorded" follows privately.
    const refused = await requests.click(channelId, STRANGER, approve, { token: strangerToken });
    const clicked = await requests.click(channelId, REQUESTER, approve, { token: requesterToken });
    for (const response of [refused, clicked]) expect(response.json).toEqual({ type: 6 });
    for (const t of [strangerToken, requesterToken])
      await until('the "recorded" follow-up', () =>
        discord.followUps.find((f) => f.token === t && /click is recorded/.test(String(f.body.content))),
      );
    await stack.restartWorker();
    await until(
      'the prompt edited',
      () => discord.messages.get(message.id)!.content.includes('approved') || undefined,
    );
    await until('the run finished', async () => (await state(channelId)).status === 'idle' || undefined);
    const file = path.join(sessionWorkdir(stack.env.DATA_DIR!, workflowIdOf(channelId)), 'count.txt');
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(1);
    // The stranger's click was judged after the reply: they hear why, ephemerally, on their interaction.
    const followUp = await until('the follow-up to the stranger', () =>
      discord.followUps.find(
        (f) => f.token === strangerToken && /may not decide/.test(String(f.body.content)),
      ),
    );
    expect(followUp.body).toMatchObject({ flags: 64 });
    // The requester hears nothing more privately: the edited prompt speaks for the accepted click.
    expect(discord.followUps.filter((f) => f.token === requesterToken)).toHaveLength(1);
    const history = JSON.stringify(
      await env.client.workflow.getHandle(workflowIdOf(channelId)).fetchHistory(),
    );
    expect(history).not.toContain(strangerToken);
  });

  it('offers Connect for a missing credential, gives each clicker a private link of their own, and resumes', async () => {
    const { channelId, message } = await prompted('fetch https://api.acme.example/files with acme');
    expect(message.content).toContain('Sign-in needed');
    const connect = control(message, 'Connect Acme');
    const mine = await requests.click(channelId, REQUESTER, connect);
    expect(mine.json).toMatchObject({ type: 4, data: { flags: 64 } });
    const link = (mine.json.data as { components: { components: { url: string; style: number }[] }[] })
      .components[0]!.components[0]!;
    expect(link.style).toBe(5);
    expect(link.url).toMatch(/\/oauth\/acme\/start\?ticket=/);
    const ticketOf = (url: string) =>
      JSON.parse(
        Buffer.from(decodeURIComponent(url.split('ticket=')[1]!).split('.')[0]!, 'base64url').toString(),
      );
    expect(ticketOf(link.url)).toMatchObject({ u: REQUESTER, p: 'acme' });
    const theirs = await requests.click(channelId, STRANGER, connect);
    const strangerUrl = (theirs.json.data as { components: { components: { url: string }[] }[] })
      .components[0]!.components[0]!.url;
    expect(ticketOf(strangerUrl)).toMatchObject({ u: STRANGER });
    // The sign-in itself is covered by the credentials tests; here the gateway's signal stands in for it.
    await env.client.workflow
      .getHandle(workflowIdOf(channelId))
      .signal(credentialProvidedSignal, { provider: 'acme', userId: REQUESTER });
    await until(
      'the prompt edited',
      () => discord.messages.get(message.id)!.content.includes('connected by') || undefined,
    );
    expect(discord.messages.get(message.id)!.components).toEqual([]);
  });

  it('keeps working when the gateway restarts between prompt and click', async () => {
    const { channelId, message } = await prompted('run `echo after-gateway-restart`');
    await stack.restartGateway();
    const clicked = await requests.click(channelId, REQUESTER, control(message, 'Approve'));
    expect(clicked.json).toEqual({ type: 6 });
    await answerIn(channelId, 'after-gateway-restart');
    const ended = await requests.click(
      snowflake(),
      REQUESTER,
      control(message, 'Approve').replace(channelId, snowflake()),
    );
    expect(ended.json).toMatchObject({ data: { flags: 64, content: expect.stringMatching(/ended/) } });
  });

  it('refuses malformed interactions with a 4xx and never writes the bot token into history or logs', async () => {
    for (const body of [
      '',
      'null',
      '{"type":3}',
      '{"id":"1","type":99}',
      JSON.stringify({
        id: snowflake(),
        type: 3,
        channel_id: snowflake(),
        member: { user: { id: REQUESTER } },
        data: { custom_id: 'ga:1:x' },
      }),
    ]) {
      const reply = await requests.post(body);
      expect(reply.status === 200 ? reply.json.data?.flags : reply.status).toBeOneOf([64, 400]);
    }
    const { channelId } = await prompted('run `echo secret-check`');
    const history = JSON.stringify(
      await env.client.workflow.getHandle(workflowIdOf(channelId)).fetchHistory(),
    );
    const logs = stack.worker.output + stack.gateway.output;
    expect(history).not.toContain(BOT_TOKEN);
    expect(logs).not.toContain(BOT_TOKEN);
  });

  describe('messages over the gateway connection (discord.js)', () => {
    const mention = `<@${FAKE_BOT_USER}>`;

    it('answers a mention in a channel, with a working sign, and ignores plain channel chatter and bots', async () => {
      discord.sendMessage({
        channelId: FAKE_CHANNEL,
        authorId: REQUESTER,
        content: 'chatter not for the bot',
      });
      discord.sendMessage({
        channelId: FAKE_CHANNEL,
        authorId: FAKE_BOT_USER,
        content: `${mention} from a bot`,
        mentionBot: true,
        bot: true,
      });
      const id = discord.sendMessage({
        channelId: FAKE_CHANNEL,
        authorId: REQUESTER,
        content: `${mention} hello from the channel`,
        mentionBot: true,
      });
      await answerIn(FAKE_CHANNEL, 'You said: "hello from the channel"');
      await until(
        'the working sign removed',
        () =>
          discord.of('DELETE', new RegExp(`/channels/${FAKE_CHANNEL}/messages/${id}/reactions/`)).length >
            0 || undefined,
      );
      expect(discord.of('PUT', new RegExp(`/messages/${id}/reactions/%E2%8F%B3/@me$`))).toHaveLength(1);
      const users = (await state(FAKE_CHANNEL)).transcript.filter((m) => m.role === 'user');
      expect(users.map((m) => (m.role === 'user' ? m.text : ''))).toEqual(['hello from the channel']);
    });

    it('in a thread, starts on a mention and then hears every message', async () => {
      discord.sendMessage({
        channelId: FAKE_THREAD,
        authorId: REQUESTER,
        content: 'before the agent joined',
      });
      discord.sendMessage({
        channelId: FAKE_THREAD,
        authorId: REQUESTER,
        content: `${mention} join us`,
        mentionBot: true,
      });
      await answerIn(FAKE_THREAD, 'You said: "join us"');
      discord.sendMessage({ channelId: FAKE_THREAD, authorId: STRANGER, content: 'no mention needed here' });
      await answerIn(FAKE_THREAD, 'You said: "no mention needed here"');
      const texts = (await state(FAKE_THREAD)).transcript.flatMap((m) => (m.role === 'user' ? [m.text] : []));
      expect(texts).toEqual(['join us', 'no mention needed here']);
    });

    it('answers a direct message, and re-posts open gates on "pending"', async () => {
      const dm = snowflake();
      discord.sendMessage({ channelId: dm, authorId: REQUESTER, content: 'run `echo dm`', guild: false });
      const first = await until('a prompt in the DM', () =>
        discord.postedIn(dm).find((m) => m.components.length > 0),
      );
      discord.sendMessage({ channelId: dm, authorId: REQUESTER, content: 'pending', guild: false });
      await until('the prompt re-posted', () =>
        discord.postedIn(dm).find((m) => m.id !== first.id && m.content.includes('Still open')),
      );
      expect((await state(dm)).transcript.filter((m) => m.role === 'user')).toHaveLength(1);
    });
  });
});
