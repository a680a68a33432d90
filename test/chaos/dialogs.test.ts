/**
 * Chaos: every dialog opens and every answer is taken while no worker runs (a deploy, a crash). The worker is
 * SIGKILLed before the click; the dialog is built from the gate's memo, the submission is a signal, and it
 * takes effect exactly once after a new worker starts. Typed answers to several questions, in each channel.
 * Requests are signed exactly as Slack and Discord sign them; the platforms and the model are local fakes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateQuery, type SessionView } from '../../workflows/session/contract';
import { DiscordKeys, DiscordRequests, snowflake } from '../helpers/discord-requests';
import { FAKE_BOT_USER, FAKE_CHANNEL, FakeDiscord } from '../helpers/fake-discord';
import { FakeOpenAi, type ChatRequest, type Reply } from '../helpers/fake-openai';
import { FakeSlack } from '../helpers/fake-slack';
import { click, mention, SlackRequests, submitView, threadReply } from '../helpers/slack-requests';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until as untilDone } from '../helpers/until';
import { Tally } from './summary';
import { mcpFixture, serverDir } from '../helpers/mcp-fixtures';

const SECRET = 'slack-signing-secret-for-dialogs';
const REQUESTER = '100000000000000001';

const QUESTIONS = [
  {
    label: 'Environment',
    prompt: 'Where should I deploy?',
    options: [{ label: 'staging' }, { label: 'production' }],
  },
  {
    label: 'Checks',
    prompt: 'Which checks first?',
    options: [{ label: 'lint' }, { label: 'tests' }, { label: 'build' }],
    multi_select: true,
    allow_custom: true,
  },
];
const REGIONS = Array.from({ length: 12 }, (_, i) => ({ label: `region-${i + 1}` }));

/** The model: a keyword in the person's message picks the tool call; a tool result is echoed back. */
function model(request: ChatRequest, index: number): Reply {
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return { text: `result: ${last.content}` };
  const text = String(last.content);
  const id = `call-${index}`;
  // "call <tool> <JSON>": any tool (the missions' tools here), as the scripted model takes it.
  const named = /^call (\w+) (.*)$/s.exec(text);
  if (named) return { toolCalls: [{ id, name: named[1]!, args: JSON.parse(named[2]!) }] };
  const command = /run `([^`]+)`/.exec(text);
  if (command) return { toolCalls: [{ id, name: 'shell_execute', args: { command: command[1] } }] };
  if (/ask regions/.test(text))
    return {
      toolCalls: [
        {
          id,
          name: 'ask_user',
          args: { questions: [{ label: 'Region', prompt: 'Which region?', options: REGIONS }] },
        },
      ],
    };
  if (/ask two/.test(text)) return { toolCalls: [{ id, name: 'ask_user', args: { questions: QUESTIONS } }] };
  return { text: `heard: ${text}` };
}

const bookingDir = serverDir('dialogs-booking-');
let env: TestWorkflowEnvironment;
let slack: FakeSlack;
let discord: FakeDiscord;
let openai: FakeOpenAi;
let stack: Stack;
let slackRequests: SlackRequests;
let discordRequests: DiscordRequests;

beforeAll(async () => {
  env = await startTestTemporal();
  [slack, discord, openai] = await Promise.all([
    new FakeSlack().start(),
    new FakeDiscord().start(),
    new FakeOpenAi(model).start(),
  ]);
  const keys = new DiscordKeys();
  stack = await startStack({
    temporalAddress: env.address,
    // A tool server that asks the person during its calls (MCP elicitation).
    policy: {
      mcpServers: {
        booking: {
          command: 'node',
          args: [mcpFixture('mcp-asking-server.mjs'), bookingDir],
        },
      },
    },
    env: {
      MODEL_PROVIDER: 'openai',
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: 'k',
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: `${slack.url}/api/`,
      DISCORD_BOT_TOKEN: 'discord-bot-token-for-tests',
      DISCORD_PUBLIC_KEY: keys.publicKeyHex,
      DISCORD_API_URL: discord.url,
    },
  });
  slackRequests = new SlackRequests(`http://127.0.0.1:${stack.port}`, SECRET);
  discordRequests = new DiscordRequests(`http://127.0.0.1:${stack.port}`, keys);
});

afterAll(async () => {
  await stack?.stop();
  await Promise.all([slack?.stop(), discord?.stop(), openai?.stop()]);
  await env?.teardown();
});

const until = <T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>) =>
  untilDone(what, probe, {
    timeoutMs: 45_000,
    context: () =>
      `Slack: ${JSON.stringify(slack.calls.map((c) => c.method))}; Discord: ${JSON.stringify(discord.calls.map((c) => `${c.method} ${c.path}`))}`,
  });

const view = (workflowId: string) =>
  env.client.workflow.getHandle(workflowId).query(stateQuery) as Promise<SessionView>;
const toolResults = async (workflowId: string) =>
  (await view(workflowId)).transcript.filter((m) => m.role === 'tool');
/** The session has finished its turn: exactly the results it should have, and nothing more comes. */
const settled = (workflowId: string) =>
  until('the turn finished', async () => {
    const v = await view(workflowId);
    return v.status === 'idle' && v.transcript.at(-1)?.role === 'assistant' ? v : undefined;
  });

const slackWorkflow = (ts: string) => `session:slack:T1:C1:${ts}`;
const postsIn = (ts: string) => slack.of('chat.postMessage').filter((m) => m.thread_ts === ts);

/** A Slack conversation's gate prompt, and the value of one of its buttons. */
async function slackPrompt(text: string) {
  const event = mention(text);
  await slackRequests.event(event);
  const message = await until('a prompt with buttons', () =>
    postsIn(event.ts).find((m) => Array.isArray(m.blocks)),
  );
  const blocks = message.blocks as { type: string; elements?: { action_id: string; value: string }[] }[];
  const buttons = blocks.find((b) => b.type === 'actions')!.elements!;
  return {
    ts: event.ts,
    workflowId: slackWorkflow(event.ts),
    message,
    value: (actionId: string) => buttons.find((b) => b.action_id === actionId)!.value,
  };
}

/** Clicks a Slack button that opens a dialog, and returns the dialog Slack was asked to open. */
async function slackDialog(actionId: string, value: string, callbackId: string) {
  const before = slack.of('views.open').length;
  const clicked = await slackRequests.interaction(click(actionId, value, 'U1', `${slack.url}/response/d`));
  expect(clicked.status).toBe(200);
  const opened = await until('the dialog opened', () =>
    slack
      .of('views.open')
      .slice(before)
      .find((v) => JSON.stringify(v.view).includes(callbackId)),
  );
  return opened.view as {
    private_metadata: string;
    blocks: { block_id: string; element: { type: string; initial_value?: string } }[];
  };
}

describe('dialogs while no worker runs', () => {
  it('opens Slack Edit & approve with the full arguments and runs the edited call once after a restart', async () => {
    const tally = new Tally();
    const prompt = await slackPrompt('run `echo original`');
    await stack.worker.kill('SIGKILL');
    const modal = await slackDialog('gate_edit', prompt.value('gate_edit'), 'gate_edit');
    tally.check(
      JSON.parse(modal.blocks[0]!.element.initial_value!).command === 'echo original',
      () => `the dialog showed ${modal.blocks[0]!.element.initial_value}`,
    );
    // Someone who may not decide submits first: accepted now, refused by the workflow later, told privately.
    const stranger = await slackRequests.interaction(
      submitView('gate_edit', modal.private_metadata, 'U9', {
        args: { value: { type: 'plain_text_input', value: '{"command": "echo stranger"}' } },
      }),
    );
    tally.check(stranger.status === 200, () => stranger.text);
    const submitted = await slackRequests.interaction(
      submitView('gate_edit', modal.private_metadata, 'U1', {
        args: { value: { type: 'plain_text_input', value: '{"command": "echo edited"}' } },
      }),
    );
    tally.check(submitted.status === 200 && !submitted.text.includes('errors'), () => submitted.text);
    // No worker answers: the submitter is told privately that it is recorded (Slack shows nothing else until then).
    // (A miss is counted, not thrown, so the worker is restarted for the tests after this one either way.)
    const recorded = await until('the submitter told it is recorded', () =>
      slack.of('chat.postEphemeral').find((m) => m.user === 'U1' && /^Recorded\./.test(String(m.text))),
    ).catch(() => undefined);
    tally.check(recorded?.thread_ts === prompt.ts, () =>
      recorded
        ? `the notice went to ${String(recorded.thread_ts)}`
        : 'the submitter was not told it is recorded',
    );
    await stack.restartWorker();
    const told = await until('the stranger told privately', () =>
      slack.of('chat.postEphemeral').find((m) => m.user === 'U9' && !/^Recorded\./.test(String(m.text))),
    );
    tally.check(/may not/.test(String(told.text)), () => `the stranger was told ${String(told.text)}`);
    const v = await settled(prompt.workflowId);
    const results = v.transcript.filter((m) => m.role === 'tool');
    tally.check(results.length === 1 && results[0]!.content.includes('edited'), () =>
      JSON.stringify(results),
    );
    tally.check(!/original|stranger/.test(JSON.stringify(results)), () => 'other arguments ran');
    tally.lost += 1 - results.length;
    tally.finish('dialogs: Slack Edit & approve with no worker');
  });

  it("opens Edit & approve on a mission run's prompt in its owner's Slack thread, and runs it once after a restart", async () => {
    const tally = new Tally();
    const event = mention(
      'call mission_create {"name": "dialog-nightly", "goal": "run `echo from-mission`", "cadence": "manual"}',
    );
    await slackRequests.event(event);
    await until('the mission created', () =>
      postsIn(event.ts).find((m) => /dialog-nightly/.test(String(m.text)) && !Array.isArray(m.blocks)),
    );
    const before = postsIn(event.ts).length;
    await slackRequests.event(threadReply(event.ts, 'call mission_fire {"name": "dialog-nightly"}'));
    // The run's gate, posted in the owner's thread and naming the mission.
    const message = await until("the run's prompt in the owner's thread", () =>
      postsIn(event.ts)
        .slice(before)
        .find((m) => Array.isArray(m.blocks) && JSON.stringify(m.blocks).includes('echo from-mission')),
    );
    const blocks = message.blocks as { type: string; elements?: { action_id: string; value: string }[] }[];
    const edit = blocks
      .find((b) => b.type === 'actions')!
      .elements!.find((b) => b.action_id === 'gate_edit')!;
    await stack.worker.kill('SIGKILL');
    const modal = await slackDialog('gate_edit', edit.value, 'gate_edit');
    tally.check(
      JSON.parse(modal.blocks[0]!.element.initial_value!).command === 'echo from-mission',
      () => `the dialog showed ${modal.blocks[0]!.element.initial_value}`,
    );
    const submitted = await slackRequests.interaction(
      submitView('gate_edit', modal.private_metadata, 'U1', {
        args: { value: { type: 'plain_text_input', value: '{"command": "echo edited-mission"}' } },
      }),
    );
    tally.check(submitted.status === 200 && !submitted.text.includes('errors'), () => submitted.text);
    await stack.restartWorker();
    // The run reports back to the owner's thread: the edited command ran, once, and nothing else did.
    const reported = await until('the run reported in the thread', async () => {
      const v = await view(slackWorkflow(event.ts));
      return v.transcript.find(
        (m) => m.role === 'assistant' && /dialog-nightly/.test(m.text) && /edited-mission/.test(m.text),
      );
    }).catch(() => undefined);
    tally.check(!!reported, () => 'the run did not report the edited command');
    // This file's server holds this one mission, so every run is its own.
    const runs = env.client.workflow.list({ query: "WorkflowType = 'missionRunWorkflow'" });
    for await (const run of runs) {
      const transcript = (
        (await env.client.workflow.getHandle(run.workflowId).query(stateQuery)) as SessionView
      ).transcript;
      const results = transcript.filter((m) => m.role === 'tool');
      tally.check(results.length === 1 && results[0]!.content.includes('edited-mission'), () =>
        JSON.stringify(results),
      );
      tally.lost += 1 - results.length;
    }
    tally.finish('dialogs: Edit & approve on a mission prompt with no worker');
  });

  it('answers a two-question Slack Answer… dialog once after a restart, and refuses a bad one in the form', async () => {
    const tally = new Tally();
    const prompt = await slackPrompt('ask two');
    await stack.worker.kill('SIGKILL');
    const modal = await slackDialog('gate_answer', prompt.value('gate_answer'), 'gate_answer');
    tally.check(
      JSON.stringify(modal.blocks.map((b) => b.element.type)) ===
        JSON.stringify(['radio_buttons', 'checkboxes', 'plain_text_input']),
      () => JSON.stringify(modal.blocks),
    );
    // Environment takes one choice and is required: refused in the form, with the reason under it.
    const bad = await slackRequests.interaction(
      submitView('gate_answer', modal.private_metadata, 'U1', {
        'q:Checks': { value: { type: 'checkboxes', selected_options: [{ value: 'lint' }] } },
      }),
    );
    const refusal = JSON.parse(bad.text || '{}') as {
      response_action?: string;
      errors?: Record<string, string>;
    };
    tally.check(
      refusal.response_action === 'errors' && /needs an answer/.test(refusal.errors?.['q:Environment'] ?? ''),
      () => `bad submission answered ${bad.text}`,
    );
    const good = await slackRequests.interaction(
      submitView('gate_answer', modal.private_metadata, 'U1', {
        'q:Environment': { value: { type: 'radio_buttons', selected_option: { value: 'production' } } },
        'q:Checks': {
          value: { type: 'checkboxes', selected_options: [{ value: 'lint' }, { value: 'build' }] },
        },
        'qc:Checks': { value: { type: 'plain_text_input', value: null } },
      }),
    );
    tally.check(good.status === 200 && !good.text.includes('errors'), () => good.text);
    await stack.restartWorker();
    const v = await settled(prompt.workflowId);
    const results = v.transcript.filter((m) => m.role === 'tool');
    const answers = results[0] ? (JSON.parse(results[0].content) as { answers: unknown }).answers : undefined;
    tally.check(
      results.length === 1 &&
        JSON.stringify(answers) ===
          JSON.stringify([
            { question: 'Environment', selected: ['production'] },
            { question: 'Checks', selected: ['lint', 'build'] },
          ]),
      () => JSON.stringify(results),
    );
    tally.lost += 1 - results.length;
    tally.finish('dialogs: Slack Answer… with no worker');
  });

  it("answers a tool server's question from Slack while no worker runs, and the call completes once after the restart", async () => {
    const tally = new Tally();
    const prompt = await slackPrompt('call booking__book_table {"restaurant":"Slack Bistro"}');
    await slackRequests.interaction(
      click('gate_approve', prompt.value('gate_approve'), 'U1', `${slack.url}/response/e`),
    );
    // The server asks during the call: its question is posted in the thread, naming the server and the tool.
    const asked = await until("the server's question in the thread", () =>
      postsIn(prompt.ts).find((m) => JSON.stringify(m.blocks ?? '').includes('tool server asks')),
    );
    const text = JSON.stringify(asked.blocks);
    tally.check(
      text.includes('Booking at Slack Bistro: who is it for, and when?') &&
        text.includes('booking__book_table'),
      () => `the question read ${text.slice(0, 400)}`,
    );
    const buttons = (
      asked.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]
    ).find((b) => b.type === 'actions')!.elements!;
    tally.check(
      buttons.some((b) => b.action_id === 'gate_deny'),
      () => 'no Decline… button',
    );
    await stack.worker.kill('SIGKILL');
    const answerValue = buttons.find((b) => b.action_id === 'gate_answer')!.value;
    const modal = await slackDialog('gate_answer', answerValue, 'gate_answer');
    const submitted = await slackRequests.interaction(
      submitView('gate_answer', modal.private_metadata, 'U1', {
        'qc:Name': { value: { type: 'plain_text_input', value: 'Grace' } },
        'qc:Guests': { value: { type: 'plain_text_input', value: '3' } },
        'q:Time': { value: { type: 'radio_buttons', selected_option: { value: 'Eight' } } },
        'q:Outdoor': { value: { type: 'radio_buttons', selected_option: { value: 'No' } } },
      }),
    );
    tally.check(submitted.status === 200 && !submitted.text.includes('errors'), () => submitted.text);
    await stack.restartWorker();
    const v = await settled(prompt.workflowId);
    const results = v.transcript.filter((m) => m.role === 'tool');
    tally.check(
      results.length === 1 && results[0]!.content.includes('booked Slack Bistro for Grace, 3 at 20:00'),
      () => JSON.stringify(results),
    );
    const booked = readFileSync(path.join(bookingDir, 'bookings.txt'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('Slack Bistro|'));
    tally.check(booked.length === 1 && booked[0] === 'Slack Bistro|Grace|3|20:00|false', () =>
      JSON.stringify(booked),
    );
    tally.lost += Math.max(0, booked.length - 1);
    tally.finish("dialogs: a tool server's question answered in Slack with no worker");
  });

  it('offers a select menu for a question with more than ten options in Slack', async () => {
    const prompt = await slackPrompt('ask regions');
    await stack.worker.kill('SIGKILL');
    const modal = await slackDialog('gate_answer', prompt.value('gate_answer'), 'gate_answer');
    expect(modal.blocks.map((b) => b.element.type)).toEqual(['static_select']);
    await slackRequests.interaction(
      submitView('gate_answer', modal.private_metadata, 'U1', {
        'q:Region': { value: { type: 'static_select', selected_option: { value: 'region-11' } } },
      }),
    );
    await stack.restartWorker();
    const results = (await settled(prompt.workflowId)).transcript.filter((m) => m.role === 'tool');
    expect(results).toEqual([expect.objectContaining({ content: expect.stringContaining('region-11') })]);
  });

  it("opens Discord's Other… dialog and takes its answers once after a restart", async () => {
    const tally = new Tally();
    const channelId = snowflake();
    await discordRequests.ask(channelId, REQUESTER, 'ask two');
    const message = structuredClone(
      await until('the question', () => discord.postedIn(channelId).find((m) => m.components.length > 0)),
    );
    const other = (message.components as { components: { label?: string; custom_id?: string }[] }[])
      .flatMap((row) => row.components)
      .find((c) => c.label === 'Other…')!.custom_id!;
    await stack.worker.kill('SIGKILL');
    const opened = await discordRequests.click(channelId, REQUESTER, other);
    tally.check(opened.json.type === 9, () => `Other… answered ${opened.text}`);
    const modal = opened.json.data as { custom_id: string; components: { label: string }[] };
    tally.check(modal.components.map((c) => c.label).join('|') === '1. Environment|2. Checks', () =>
      JSON.stringify(modal.components),
    );
    const submitted = await discordRequests.submit(channelId, REQUESTER, modal.custom_id, {
      '0': '1',
      '1': 'other: smoke tests',
    });
    tally.check(submitted.status === 200, () => submitted.text);
    await stack.restartWorker();
    const workflowId = `session:discord:${channelId}`;
    const results = (await settled(workflowId)).transcript.filter((m) => m.role === 'tool');
    tally.check(
      results.length === 1 &&
        results[0]!.content.includes('staging') &&
        results[0]!.content.includes('smoke tests'),
      () => JSON.stringify(results),
    );
    tally.lost += 1 - results.length;
    tally.finish('dialogs: Discord Other… with no worker');
  });

  it("opens Discord's Edit & approve… dialog and runs the edited call once after a restart", async () => {
    const channelId = snowflake();
    await discordRequests.ask(channelId, REQUESTER, 'run `echo original`');
    const message = structuredClone(
      await until('the prompt', () => discord.postedIn(channelId).find((m) => m.components.length > 0)),
    );
    const edit = (message.components as { components: { label?: string; custom_id?: string }[] }[])
      .flatMap((row) => row.components)
      .find((c) => c.label === 'Edit & approve…')!.custom_id!;
    await stack.worker.kill('SIGKILL');
    const opened = await discordRequests.click(channelId, REQUESTER, edit);
    expect(opened.json.type).toBe(9);
    const modal = opened.json.data as { custom_id: string; components: { component: { value: string } }[] };
    expect(JSON.parse(modal.components[0]!.component.value)).toEqual({ command: 'echo original' });
    const submitted = await discordRequests.submit(channelId, REQUESTER, modal.custom_id, {
      args: '{"command": "echo edited"}',
    });
    expect(submitted.json).toEqual({ type: 6 });
    await stack.restartWorker();
    const results = (await settled(`session:discord:${channelId}`)).transcript.filter(
      (m) => m.role === 'tool',
    );
    expect(results).toEqual([
      expect.objectContaining({ status: 'ok', content: expect.stringContaining('edited') }),
    ]);
  });
});

describe('typed answers to several questions', () => {
  it('takes "1: 2; 2: 1,3" in a Slack thread, after explaining what was missing', async () => {
    const prompt = await slackPrompt('ask two');
    const reply = (text: string, n: number) =>
      slackRequests.event({
        type: 'message',
        channel_type: 'channel',
        user: 'U1',
        text,
        ts: `${prompt.ts.split('.')[0]}.9${String(n).padStart(5, '0')}`,
        thread_ts: prompt.ts,
        channel: 'C1',
      });
    await reply('2: 1,3', 1);
    const notice = await until('the explanation', () =>
      slack.of('chat.postEphemeral').find((m) => String(m.text).includes('still missing: 1 (Environment)')),
    );
    expect(notice.user).toBe('U1');
    await reply('1: 2; 2: 1,3', 2);
    const results = (await settled(prompt.workflowId)).transcript.filter((m) => m.role === 'tool');
    expect(JSON.parse(results[0]!.content)).toMatchObject({
      answers: [
        { question: 'Environment', selected: ['production'] },
        { question: 'Checks', selected: ['lint', 'build'] },
      ],
    });
    expect(results).toHaveLength(1);
  });

  it('takes "1: staging; 2: other: smoke" in a Discord channel', async () => {
    const channelId = FAKE_CHANNEL;
    await discordRequests.ask(channelId, REQUESTER, 'ask two');
    const question = await until('the question', () =>
      discord.postedIn(channelId).find((m) => m.components.length > 0),
    );
    expect(question.content).toContain('**1. Environment**');
    discord.sendMessage({
      channelId,
      authorId: REQUESTER,
      content: `<@${FAKE_BOT_USER}> 1: staging; 2: other: smoke`,
      mentionBot: true,
    });
    const results = (await settled(`session:discord:${channelId}`)).transcript.filter(
      (m) => m.role === 'tool',
    );
    expect(JSON.parse(results[0]!.content)).toMatchObject({
      answers: [
        { question: 'Environment', selected: ['staging'] },
        { question: 'Checks', selected: [], custom: 'smoke' },
      ],
    });
  });

  it('takes typed answers in the web chat, and explains an invalid one', async () => {
    await stack.web.say('typed-web', 'ask two');
    await stack.web.pendingGate('typed-web');
    await stack.web.say('typed-web', '1: 3; 2: 1');
    const notice = await until('the explanation', async () => {
      const v = await view('session:web:typed-web');
      return v.notices.find((n) => n.text.includes('"3" is not an answer to question 1 (Environment)'));
    });
    expect(notice.to).toBe('alice');
    expect((await view('session:web:typed-web')).gates[0]!.status).toBe('pending');
    await stack.web.say('typed-web', '1: production\n2: tests');
    const answered = await stack.web.answered('typed-web');
    expect(answered.transcript.filter((m) => m.role === 'tool')).toEqual([
      expect.objectContaining({ content: expect.stringContaining('"selected":["tests"]') }),
    ]);
    await expect(toolResults('session:web:typed-web')).resolves.toHaveLength(1);
  });
});
