/**
 * Streamed answers in Slack, Discord and Teams (#22): real worker and gateway processes, requests signed as the
 * platforms sign them, a model server that streams. The answer appears in one message that is edited as it is
 * written (as often as each platform allows), and the final message takes that message's place: no second copy.
 * In a Teams personal chat it is Teams' own stream (typing activities with `streaminfo`, closed by the final message).
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateQuery, type SessionView } from '../../workflows/session/contract';
import { DiscordKeys, DiscordRequests, snowflake } from '../helpers/discord-requests';
import { FakeDiscord } from '../helpers/fake-discord';
import { FakeOpenAi } from '../helpers/fake-openai';
import { FakeSlack } from '../helpers/fake-slack';
import { FakeTeams, teamsMessage } from '../helpers/fake-teams';
import { mention, SlackRequests, threadReply } from '../helpers/slack-requests';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

const SECRET = 'slack-signing-secret-for-streaming';
/** About eight seconds of streaming (Slack edits every 3 s), well within one Slack or Discord message. */
const ANSWER = Array.from({ length: 24 }, (_, i) => `Line ${i + 1} of a streamed answer.`).join(' ');

let env: TestWorkflowEnvironment;
let model: FakeOpenAi;
let slack: FakeSlack;
let discord: FakeDiscord;
const teams = new FakeTeams();
let stack: Stack;
let slackRequests: SlackRequests;
let discordRequests: DiscordRequests;

beforeAll(async () => {
  env = await startTestTemporal();
  model = await new FakeOpenAi(() => ({ text: ANSWER }), { streamGapMs: 60 }).start();
  slack = await new FakeSlack().start();
  discord = await new FakeDiscord().start();
  await teams.start();
  const keys = new DiscordKeys();
  stack = await startStack({
    temporalAddress: env.address,
    env: {
      ...model.env,
      ...slack.env(SECRET),
      DISCORD_BOT_TOKEN: 'discord-bot-token-for-tests',
      DISCORD_PUBLIC_KEY: keys.publicKeyHex,
      DISCORD_API_URL: discord.url,
      ...teams.env(),
    },
  });
  slackRequests = new SlackRequests(`http://127.0.0.1:${stack.port}`, SECRET);
  discordRequests = new DiscordRequests(`http://127.0.0.1:${stack.port}`, keys);
});

afterAll(async () => {
  await stack?.stop();
  await discord?.stop();
  await teams.stop();
  await slack?.stop();
  await model?.stop();
  await env?.teardown();
});

/** Every text a streamed message showed, in order: growing parts of the answer, marked as still written. */
function expectGrowing(texts: string[]) {
  expect(texts.length).toBeGreaterThanOrEqual(1);
  for (const [i, text] of texts.entries()) {
    expect(text.endsWith(' …')).toBe(true);
    expect(ANSWER.startsWith(text.slice(0, -2))).toBe(true);
    if (i) expect(text.length).toBeGreaterThanOrEqual(texts[i - 1]!.length);
  }
}

describe('streamed answers in chats', () => {
  it('Slack: one message edited while the answer is written, then replaced by the final answer', async () => {
    const event = mention('write a long answer');
    await slackRequests.event(event);
    const posts = () => slack.of('chat.postMessage').filter((m) => m.thread_ts === event.ts);
    const placeholder = await until('the message being written', () =>
      posts().find((m) => String(m.text).endsWith(' …')),
    );
    const ts = await until(
      'its ts',
      () =>
        slack.calls.find((c) => c.method === 'chat.update' && c.body.channel === 'C1')?.body.ts as
          string | undefined,
    );
    const final = await until(
      'the final answer in its place',
      () => slack.of('chat.update').find((u) => u.ts === ts && u.text === ANSWER),
      { timeoutMs: 30_000 },
    );
    expect(final).toBeDefined();
    const edits = slack.of('chat.update').filter((u) => u.ts === ts && u.text !== ANSWER);
    expectGrowing([String(placeholder.text), ...edits.map((u) => String(u.text))]);
    expect(edits.length).toBeGreaterThanOrEqual(1);
    // One message in the thread carries the answer: the streamed one, now final; nothing posted twice.
    expect(posts().filter((m) => String(m.text).includes('Line 1 of'))).toHaveLength(1);
  });

  it('Slack: a Stop while the answer is written leaves the message with what was written, marked stopped', async () => {
    const event = mention('write a long answer, which I will stop');
    await slackRequests.event(event);
    const placeholder = await until('the message being written', () =>
      slack.of('chat.postMessage').find((m) => m.thread_ts === event.ts && String(m.text).endsWith(' …')),
    );
    await slackRequests.event(threadReply(event.ts, 'stop'));
    const stopped = await until('the message marked stopped', () =>
      slack.of('chat.update').find((u) => String(u.text).endsWith('(stopped)')),
    );
    expect(ANSWER.startsWith(String(stopped.text).replace(/ \(stopped\)$/, ''))).toBe(true);
    await until('the stop noted', () =>
      slack
        .of('chat.postMessage')
        .find((m) => m.thread_ts === event.ts && String(m.text).includes('Stopped by')),
    );
    // Nothing posted the whole answer afterwards.
    expect(slack.of('chat.postMessage').filter((m) => m.thread_ts === event.ts && m.text === ANSWER)).toEqual(
      [],
    );
    // The message kept what it showed when the turn was stopped (and only said so).
    expect(String(stopped.text).startsWith(String(placeholder.text).slice(0, -2))).toBe(true);
    // The transcript keeps what was written too, marked the same way, before the note; the chat got it once.
    const view = (await env.client.workflow
      .getHandle(`session:slack:T1:C1:${event.ts}`)
      .query(stateQuery)) as SessionView;
    const [kept, note] = view.transcript.slice(-2);
    expect(kept).toMatchObject({ role: 'assistant', stopped: true });
    expect(kept?.role === 'assistant' && kept.text.endsWith(' (stopped)')).toBe(true);
    expect(ANSWER.startsWith((kept as { text: string }).text.replace(/ \(stopped\)$/, ''))).toBe(true);
    expect(note).toMatchObject({ role: 'assistant', text: '⏹️ Stopped by @U1.' });
    expect(slack.of('chat.postMessage').filter((m) => String(m.text).endsWith('(stopped)'))).toEqual([]);
  });

  it('Discord: one message edited while the answer is written, then replaced by the final answer', async () => {
    const channelId = snowflake();
    await discordRequests.ask(channelId, '100000000000000001', 'write a long answer');
    const placeholder = await until('the message being written', () =>
      discord.postedIn(channelId).find((m) => m.content.endsWith(' …')),
    );
    await until(
      'the final answer in its place',
      () => discord.messages.get(placeholder.id)?.content === ANSWER || undefined,
      { timeoutMs: 30_000 },
    );
    // The post, then its edits (the fake keeps each edit's content).
    const edits = discord.contentEdits.filter((e) => e.id === placeholder.id && e.content !== ANSWER);
    expectGrowing(edits.map((e) => e.content));
    expect(discord.contentEdits.filter((e) => e.id === placeholder.id).at(-1)!.content).toBe(ANSWER);
    expect(discord.postedIn(channelId).filter((m) => m.content.includes('Line 1 of'))).toHaveLength(1);
  });

  /** A message from a person in Teams, signed as the Bot Connector signs it. */
  async function teamsSays(conversationId: string, text: string) {
    const activity = teamsMessage(
      teams.serviceUrl,
      conversationId,
      '6f0c1d2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f',
      text,
    );
    expect((await teams.signed(stack.port, activity)).status).toBe(200);
  }

  it("Teams, personal chat: Teams' own stream while the answer is written, closed by the final answer", async () => {
    const conversationId = `a:${snowflake()}`;
    await teamsSays(conversationId, 'write a long answer');
    const stream = await until(
      'the stream closed by the final answer',
      () => teams.streams(conversationId).find((s) => s.final !== undefined),
      { timeoutMs: 30_000 },
    );
    expect(stream.final).toBe(ANSWER);
    // Updates grow and are parts of the answer (Teams shows them as the answer being typed; no "…" needed).
    expect(stream.updates.length).toBeGreaterThanOrEqual(2);
    for (const [i, text] of stream.updates.entries()) {
      expect(ANSWER.startsWith(text)).toBe(true);
      if (i) expect(text.length).toBeGreaterThanOrEqual(stream.updates[i - 1]!.length);
    }
    // One stream, and the answer once: no message posted or edited besides the stream's final one.
    expect(teams.streams(conversationId)).toHaveLength(1);
    expect(teams.texts(conversationId).filter((t) => t.includes('Line 1 of'))).toEqual([ANSWER]);
    expect(teams.sent.filter((s) => s.conversationId === conversationId && s.method === 'PUT')).toEqual([]);
  });

  it('Teams, group chat (no streaming there): one message edited while written, then the final answer', async () => {
    const conversationId = `19:${snowflake()}@thread.v2`;
    await teamsSays(conversationId, 'write a long answer');
    const answered = () =>
      teams.sent.filter((s) => s.conversationId === conversationId && s.body.text?.includes('Line 1 of'));
    await until('the final answer in its place', () => answered().find((s) => s.body.text === ANSWER), {
      timeoutMs: 30_000,
    });
    const [first, ...edits] = answered();
    expect(first!.method).toBe('POST');
    expect(edits.every((e) => e.method === 'PUT' && e.activityId === first!.activityId)).toBe(true);
    expectGrowing([first!.body.text!, ...edits.slice(0, -1).map((e) => e.body.text!)]);
    expect(teams.streams(conversationId)).toEqual([]);
  });
});
