/**
 * The Slack gateway end to end: signed requests in, a local Slack Web API out, a real worker, gateway and
 * Temporal server in between.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import { stateQuery, type SessionView } from '../../workflows/session/contract';
import { FakeSlack } from '../helpers/fake-slack';
import { click, mention, SlackRequests, submitView } from '../helpers/slack-requests';
import { startStack, type Stack } from '../helpers/stack';
import { AgentFeedback } from '../../common/search-attributes';
import { startTestTemporal } from '../helpers/temporal';
import { until as untilDone } from '../helpers/until';

const SECRET = 'slack-signing-secret-for-tests';
let env: TestWorkflowEnvironment;
let slack: FakeSlack;
let stack: Stack;
let requests: SlackRequests;

beforeAll(async () => {
  env = await startTestTemporal();
  slack = await new FakeSlack().start();
  stack = await startStack({
    temporalAddress: env.address,
    policy: { approvers: ['U3'], reminderAfter: '4s' },
    env: {
      ...slack.env(SECRET),
      SLACK_ASSISTANT: 'on',
    },
  });
  requests = new SlackRequests(`http://127.0.0.1:${stack.port}`, SECRET);
});

afterAll(async () => {
  await stack?.stop();
  await slack?.stop();
  await env?.teardown();
});

const workflowIdOf = (ts: string) => `session:slack:T1:C1:${ts}`;

const until = <T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000) =>
  untilDone(what, probe, {
    timeoutMs,
    context: () => `Slack calls: ${JSON.stringify(slack.calls.map((c) => c.method))}`,
  });

const postsIn = (ts: string) => slack.of('chat.postMessage').filter((m) => m.thread_ts === ts);
const state = (ts: string) =>
  env.client.workflow.getHandle(workflowIdOf(ts)).query(stateQuery) as Promise<SessionView>;

/** The approval prompt posted in a thread, and the value of one of its buttons. */
async function prompt(ts: string) {
  const message = await until('an approval prompt', () => postsIn(ts).find((m) => Array.isArray(m.blocks)));
  const blocks = message.blocks as { type: string; elements?: { action_id: string; value: string }[] }[];
  const buttons = blocks.find((b) => b.type === 'actions')!.elements!;
  return { message, value: (actionId: string) => buttons.find((b) => b.action_id === actionId)!.value };
}

describe('Slack', () => {
  it('answers the URL verification challenge and refuses forged or stale requests', async () => {
    const challenge = await requests.post(
      JSON.stringify({ type: 'url_verification', challenge: 'c-123', token: 't' }),
      'application/json',
    );
    expect(challenge.status).toBe(200);
    expect(challenge.text).toContain('c-123');

    const forgedEvent = mention('forged');
    const body = JSON.stringify({ type: 'event_callback', team_id: 'T1', event: forgedEvent });
    expect((await requests.post(body, 'application/json', { secret: 'wrong-secret' })).status).toBe(401);
    const stale = Math.floor(Date.now() / 1000) - 10 * 60;
    expect((await requests.post(body, 'application/json', { timestamp: stale })).status).toBe(401);
    const unsigned = await fetch(`http://127.0.0.1:${stack.port}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(unsigned.status).toBe(401);
    await expect(env.client.workflow.getHandle(workflowIdOf(forgedEvent.ts)).describe()).rejects.toThrow(
      /not found/i,
    );
  });

  it('answers a mention in its thread, with a working sign while the turn runs, once even when Slack retries', async () => {
    const event = mention('hello there');
    expect((await requests.event(event)).status).toBe(200);
    expect((await requests.event(event, { retryNum: 1 })).status).toBe(200);
    const answer = await until('the answer', () =>
      postsIn(event.ts).find((m) => String(m.text).includes('You said: "hello there"')),
    );
    expect(answer.channel).toBe('C1');
    // No link previews under an answer: Slack would fetch whatever address the model wrote.
    expect([String(answer.unfurl_links), String(answer.unfurl_media)]).toEqual(['false', 'false']);
    expect(slack.of('reactions.add')).toContainEqual(
      expect.objectContaining({ channel: 'C1', timestamp: event.ts, name: 'hourglass_flowing_sand' }),
    );
    await until('the working sign removed', () =>
      slack.of('reactions.remove').find((r) => r.timestamp === event.ts),
    );
    const view = await state(event.ts);
    expect(view.transcript.filter((m) => m.role === 'user')).toHaveLength(1);
  });

  it('posts an approval prompt, runs the tool on Approve, and edits the prompt to show who approved', async () => {
    const event = mention('run `echo from-slack`');
    await requests.event(event);
    const { message, value } = await prompt(event.ts);
    expect(JSON.stringify(message.blocks)).toContain('echo from-slack');
    expect(JSON.stringify(message.blocks)).toContain('requested by <@U1>');

    expect(
      (
        await requests.interaction(
          click('gate_approve', value('gate_approve'), 'U1', `${slack.url}/response/1`),
        )
      ).status,
    ).toBe(200);
    const edited = await until('the prompt edited', () =>
      slack.of('chat.update').find((u) => String(u.text).includes('approved by <@U1>')),
    );
    expect(edited.ts).toBeDefined();
    await until('the answer', () =>
      postsIn(event.ts).find((m) => String(m.text).includes('from-slack') && !m.blocks),
    );
  });

  it('asks for a deny reason in a modal and tells the model', async () => {
    const event = mention('run `echo nope`');
    await requests.event(event);
    const { value } = await prompt(event.ts);
    await requests.interaction(click('gate_deny', value('gate_deny'), 'U1', `${slack.url}/response/2`));
    const opened = await until('the deny modal', () =>
      slack.of('views.open').find((v) => JSON.stringify(v.view).includes('gate_deny')),
    );
    const view = opened.view as { private_metadata: string };
    const submitted = await requests.interaction(
      submitView('gate_deny', view.private_metadata, 'U1', {
        reason: { value: { type: 'plain_text_input', value: 'not on Fridays' } },
      }),
    );
    expect(submitted.status).toBe(200);
    await until('the answer with the reason', () =>
      postsIn(event.ts).find((m) => String(m.text).includes('not on Fridays')),
    );
    const result = (await state(event.ts)).transcript.find((m) => m.role === 'tool');
    expect(result).toMatchObject({
      status: 'denied',
      content: expect.stringContaining('denied by @U1: not on Fridays'),
    });
  });

  it('explains to an unauthorised clicker and a late clicker, privately, and changes nothing', async () => {
    const event = mention('run `echo guarded`');
    await requests.event(event);
    const { value } = await prompt(event.ts);
    await requests.interaction(click('gate_approve', value('gate_approve'), 'U2', `${slack.url}/response/3`));
    const refusal = await until('an ephemeral refusal', () =>
      slack.of('chat.postEphemeral').find((e) => e.user === 'U2'),
    );
    expect(refusal.text).toContain('You may not decide');
    expect((await state(event.ts)).gates[0]!.status).toBe('pending');

    await requests.interaction(click('gate_approve', value('gate_approve'), 'U3', `${slack.url}/response/4`));
    await until('the approval by the configured approver', () =>
      slack.of('chat.update').find((u) => String(u.text).includes('approved by <@U3>')),
    );
    await requests.interaction(click('gate_approve', value('gate_approve'), 'U1', `${slack.url}/response/5`));
    const late = await until('an ephemeral "already"', () =>
      slack
        .of('chat.postEphemeral')
        .find((e) => e.user === 'U1' && String(e.text).includes('already approved by <@U3>')),
    );
    expect(late.text).toMatch(/at \d\d:\d\d UTC/);
    expect((await state(event.ts)).transcript.filter((m) => m.role === 'tool')).toHaveLength(1);
  });

  it('tells a clicker privately that the click is recorded while no worker runs, and it then runs once', async () => {
    const event = mention('run `echo while-deploying`');
    await requests.event(event);
    const { value } = await prompt(event.ts);
    await stack.worker.kill('SIGKILL');
    try {
      const clicked = await requests.interaction(
        click('gate_approve', value('gate_approve'), 'U1', `${slack.url}/response/recorded`),
      );
      expect(clicked.status).toBe(200);
      const told = await until('the clicker told it is recorded', () =>
        slack.of('response_url').find((r) => String(r.text).startsWith('Recorded.')),
      );
      expect(told).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    } finally {
      await stack.restartWorker(); // whatever happened above, the next tests have a worker
    }
    await until('the approved call', async () =>
      (await state(event.ts)).transcript.some(
        (m) => m.role === 'tool' && m.content.includes('while-deploying'),
      ),
    );
    expect((await state(event.ts)).transcript.filter((m) => m.role === 'tool')).toHaveLength(1);
  });

  it('tells a clicker that the conversation has ended, instead of "try again"', async () => {
    const event = mention('run `echo ended`');
    await requests.event(event);
    const { value } = await prompt(event.ts);
    await env.client.workflow.getHandle(workflowIdOf(event.ts)).terminate('ended by an operator');
    const clicked = await requests.interaction(
      click('gate_approve', value('gate_approve'), 'U1', `${slack.url}/response/ended`),
    );
    expect(clicked.status).toBe(200);
    const told = await until('the clicker told', () =>
      slack.of('response_url').find((r) => String(r.text).includes('has ended')),
    );
    expect(told.text).toBe('That conversation has ended (or never existed here); nothing changed.');
  });

  it('shows the requester a private Stop button while a turn runs, and stops the turn on its click', async () => {
    const event = mention('run `echo stop-me`');
    await requests.event(event);
    await prompt(event.ts);
    const note = await until('the private working note', () =>
      slack.of('chat.postEphemeral').find((e) => e.user === 'U1' && e.thread_ts === event.ts),
    );
    const blocks = (typeof note.blocks === 'string' ? JSON.parse(note.blocks) : note.blocks) as {
      accessory?: { action_id: string; value: string };
    }[];
    const stop = blocks[0]!.accessory!;
    expect(stop.action_id).toBe('turn_stop');
    expect(JSON.parse(stop.value)).toEqual({ workflowId: workflowIdOf(event.ts) });

    // Someone else's forged click is refused by the workflow, privately; the requester's stops the turn.
    await requests.interaction(click('turn_stop', stop.value, 'U2', `${slack.url}/response/stop-1`));
    await until('the refusal', () =>
      slack
        .of('chat.postEphemeral')
        .find((e) => e.user === 'U2' && String(e.text).includes('can stop this turn')),
    );
    expect((await state(event.ts)).status).toBe('waiting_approval');
    await requests.interaction(click('turn_stop', stop.value, 'U1', `${slack.url}/response/stop-2`));
    await until('the prompt edited to say who stopped it', () =>
      slack.of('chat.update').find((u) => String(u.text).includes('stopped by <@U1>')),
    );
    await until('the stop told in the thread', () =>
      postsIn(event.ts).find((m) => String(m.text).includes('Stopped by <@U1>')),
    );
    await until('the working sign removed', () =>
      slack.of('reactions.remove').find((r) => r.timestamp === event.ts),
    );
    expect((await state(event.ts)).status).toBe('idle');
  });

  it('answers a malformed button with a clear private message and signals nothing', async () => {
    const response = await requests.interaction(
      click('gate_approve', '{"workflowId":"elsewhere"}', 'U1', `${slack.url}/response/6`),
    );
    expect(response.status).toBe(200);
    const reply = await until('the ephemeral reply', () =>
      slack.of('response_url').find((r) => String(r.text).includes('not one of ours')),
    );
    expect(reply.response_type).toBe('ephemeral');
  });

  it('re-posts open gates with fresh buttons on "pending", and the old buttons still work', async () => {
    const event = mention('run `echo twice`');
    await requests.event(event);
    const first = await prompt(event.ts);
    await requests.event(mention('pending', { thread_ts: event.ts }));
    await until(
      'a second prompt',
      () => postsIn(event.ts).filter((m) => Array.isArray(m.blocks)).length === 2 || undefined,
    );
    await requests.command({
      command: '/agent',
      text: 'pending',
      team_id: 'T1',
      channel_id: 'C1',
      user_id: 'U1',
      response_url: `${slack.url}/response/7`,
      trigger_id: 't',
    });
    await until(
      'a third prompt',
      () => postsIn(event.ts).filter((m) => Array.isArray(m.blocks)).length >= 3 || undefined,
    );

    await requests.interaction(
      click('gate_approve', first.value('gate_approve'), 'U1', `${slack.url}/response/8`),
    );
    await until(
      'every posted prompt edited',
      () =>
        slack
          .of('chat.update')
          .filter(
            (u) =>
              String(u.text).includes('approved by <@U1>') &&
              String(JSON.stringify(u.blocks)).includes('echo twice'),
          ).length >= 3 || undefined,
    );
  });

  it('edits the arguments in a modal, refusing invalid JSON there', async () => {
    const event = mention('run `echo before`');
    await requests.event(event);
    const { value } = await prompt(event.ts);
    await requests.interaction(click('gate_edit', value('gate_edit'), 'U1', `${slack.url}/response/10`));
    const opened = await until('the edit modal', () =>
      slack.of('views.open').find((v) => JSON.stringify(v.view).includes('gate_edit')),
    );
    const modal = opened.view as {
      private_metadata: string;
      blocks: { element: { initial_value: string } }[];
    };
    expect(JSON.parse(modal.blocks[0]!.element.initial_value)).toEqual({ command: 'echo before' });
    const invalid = await requests.interaction(
      submitView('gate_edit', modal.private_metadata, 'U1', {
        args: { value: { type: 'plain_text_input', value: '{not json' } },
      }),
    );
    expect(JSON.parse(invalid.text)).toMatchObject({
      response_action: 'errors',
      errors: { args: expect.stringContaining('JSON object') },
    });
    await requests.interaction(
      submitView('gate_edit', modal.private_metadata, 'U1', {
        args: { value: { type: 'plain_text_input', value: '{"command": "echo after"}' } },
      }),
    );
    await until('the edited run', () =>
      slack.of('chat.update').find((u) => String(u.text).includes('edited and approved by <@U1>')),
    );
    const result = await until('the result', async () =>
      (await state(event.ts)).transcript.find((m) => m.role === 'tool'),
    );
    expect(result).toMatchObject({ status: 'ok', content: expect.stringContaining('echo after') });
  });

  it('grants "always allow here" for the thread and decides by a typed reply in it', async () => {
    const event = mention('run `echo one`');
    await requests.event(event);
    const { value } = await prompt(event.ts);
    await requests.interaction(
      click('gate_always_session', value('gate_always_session'), 'U1', `${slack.url}/response/11`),
    );
    await until('the grant', async () => (await state(event.ts)).grants.length === 1 || undefined);
    await requests.event({ ...mention('run `echo one`'), thread_ts: event.ts });
    await until(
      'the second run without a prompt',
      async () =>
        (await state(event.ts)).transcript.filter((m) => m.role === 'tool').length === 2 || undefined,
    );
    expect(postsIn(event.ts).filter((m) => Array.isArray(m.blocks))).toHaveLength(1);

    await requests.event({ ...mention('post https://example.invalid x'), thread_ts: event.ts });
    await until(
      'a second prompt',
      () => postsIn(event.ts).filter((m) => Array.isArray(m.blocks)).length === 2 || undefined,
    );
    const typed = {
      type: 'message',
      channel_type: 'channel',
      user: 'U1',
      text: 'deny wrong host',
      ts: '1700000999.000001',
      thread_ts: event.ts,
      channel: 'C1',
    };
    await requests.event(typed);
    await until(
      'the typed denial',
      async () =>
        (await state(event.ts)).transcript.some(
          (m) => m.role === 'tool' && m.content.includes('denied by @U1: wrong host'),
        ) || undefined,
    );
  });

  it('opens an assistant thread with suggested prompts, names it, and shows a working status while a turn runs', async () => {
    const threadTs = '1700000999.000001';
    await requests.event({
      type: 'assistant_thread_started',
      assistant_thread: { user_id: 'U1', channel_id: 'D9', thread_ts: threadTs, context: {} },
      event_ts: '1700000999.000002',
    });
    const prompts = await until('the suggested prompts', () =>
      slack.of('assistant.threads.setSuggestedPrompts').find((c) => c.thread_ts === threadTs),
    );
    expect(prompts).toMatchObject({ channel_id: 'D9', title: 'Try asking' });
    expect((prompts.prompts as { title: string }[]).map((p) => p.title)).toEqual([
      'What can you do?',
      'What time is it?',
    ]);

    const ts = '1700001000.000001';
    await requests.event({
      type: 'message',
      channel_type: 'im',
      user: 'U1',
      text: 'hello   from the assistant pane',
      ts,
      thread_ts: threadTs,
      channel: 'D9',
    });
    await until('the answer in the assistant thread', () =>
      slack
        .of('chat.postMessage')
        .find((m) => m.channel === 'D9' && m.thread_ts === threadTs && String(m.text).includes('hello')),
    );
    expect(slack.of('assistant.threads.setTitle')).toContainEqual(
      expect.objectContaining({
        channel_id: 'D9',
        thread_ts: threadTs,
        title: 'hello from the assistant pane',
      }),
    );
    // "is working…" while the turn ran (set at once by the gateway, again by the worker), cleared after it.
    const statuses = await until('the status cleared', () => {
      const set = slack.of('assistant.threads.setStatus').filter((c) => c.thread_ts === threadTs);
      return set.at(-1)?.status === '' ? set : undefined;
    });
    expect(statuses[0]!.status).toBe('is working on it…');
    // The conversation is the assistant thread's own session.
    const handle = env.client.workflow.getHandle(`session:slack:T1:D9:${threadTs}`);
    expect((await handle.query(stateQuery)).status).toBe('idle');

    // The answer ends with 👍 / 👎; a 👎 is recorded on that message and findable in the Temporal UI.
    const answer = slack
      .of('chat.postMessage')
      .find((m) => m.channel === 'D9' && m.thread_ts === threadTs && Array.isArray(m.blocks))!;
    const feedback = (
      answer.blocks as { type: string; block_id: string; elements: { type: string }[] }[]
    ).find((b) => b.type === 'context_actions')!;
    expect(feedback.elements[0]!.type).toBe('feedback_buttons');
    const rate = (value: string, user: string) =>
      requests.interaction({
        type: 'block_actions',
        team: { id: 'T1' },
        user: { id: user, team_id: 'T1' },
        api_app_id: 'A1',
        trigger_id: `trigger-${Math.random()}`,
        response_url: `${slack.url}/response/feedback`,
        channel: { id: 'D9' },
        container: {
          type: 'message',
          channel_id: 'D9',
          message_ts: '1800000000.999999',
          thread_ts: threadTs,
        },
        actions: [
          {
            type: 'feedback_buttons',
            action_id: 'answer_feedback',
            block_id: feedback.block_id,
            value,
            action_ts: '1',
          },
        ],
      });
    expect((await rate('bad', 'U1')).status).toBe(200);
    await rate('good', 'U2');
    await rate('good', 'U1'); // U1 changes their mind: one rating per person, the latest
    const rated = await until('the ratings on the answer', async () => {
      const view = await handle.query(stateQuery);
      const message = view.transcript.find((m) => m.role === 'assistant' && m.feedback?.length === 2);
      return message?.role === 'assistant' && message.feedback!.every((f) => f.rating === 'good')
        ? message
        : undefined;
    });
    expect(rated.feedback!.map((f) => f.by).sort()).toEqual(['U1', 'U2']);
    // Every rating given here, so operators find conversations someone rated 👎 even after a change of mind.
    expect((await handle.describe()).typedSearchAttributes.get(AgentFeedback)).toEqual(['bad', 'good']);
    // A button naming no answer of this conversation records nothing, and its clicker is told privately.
    const forged = await requests.interaction({
      type: 'block_actions',
      team: { id: 'T1' },
      user: { id: 'U3', team_id: 'T1' },
      api_app_id: 'A1',
      trigger_id: 'trigger-forged',
      response_url: `${slack.url}/response/feedback`,
      container: { type: 'message', channel_id: 'D9', message_ts: '1800000000.999999', thread_ts: threadTs },
      actions: [
        {
          type: 'feedback_buttons',
          action_id: 'answer_feedback',
          block_id: 'feedback:nope',
          value: 'bad',
          action_ts: '1',
        },
      ],
    });
    expect(forged.status).toBe(200);
    await until('the forged rating to be refused', () =>
      slack
        .of('chat.postEphemeral')
        .find((m) => m.user === 'U3' && String(m.text).includes('no longer in this conversation')),
    );
    expect((await handle.describe()).typedSearchAttributes.get(AgentFeedback)).toEqual(['bad', 'good']);
  });

  it('answers a direct message in its thread, and reminds about a gate still open', async () => {
    const dm = {
      type: 'message',
      channel_type: 'im',
      user: 'U1',
      text: 'run `echo dm`',
      ts: '1700000888.000001',
      channel: 'D1',
    };
    await requests.event(dm);
    await until('the prompt in the DM', () =>
      slack.of('chat.postMessage').find((m) => m.channel === 'D1' && Array.isArray(m.blocks)),
    );
    const reminder = await until(
      'a reminder',
      () =>
        slack
          .of('chat.postMessage')
          .find(
            (m) =>
              m.channel === 'D1' && JSON.stringify(m.blocks ?? '').includes('Still waiting for a decision'),
          ),
      20_000,
    );
    expect(reminder.thread_ts).toBe(dm.ts);
  });

  it('answers a question through the Slack modal', async () => {
    const event = mention('ask me');
    await requests.event(event);
    const message = await until('the question', () =>
      postsIn(event.ts).find((m) => JSON.stringify(m.blocks ?? '').includes('gate_answer')),
    );
    const button = (message.blocks as { type: string; elements?: { value: string }[] }[]).find(
      (b) => b.type === 'actions',
    )!.elements![0]!;
    await requests.interaction(click('gate_answer', button.value, 'U1', `${slack.url}/response/12`));
    const opened = await until('the answer modal', () =>
      slack.of('views.open').find((v) => JSON.stringify(v.view).includes('gate_answer')),
    );
    const modal = opened.view as { private_metadata: string };
    await requests.interaction(
      submitView('gate_answer', modal.private_metadata, 'U1', {
        'q:Environment': { value: { type: 'radio_buttons', selected_option: { value: 'production' } } },
        'q:Checks': { value: { type: 'checkboxes', selected_options: [{ value: 'tests' }] } },
        'qc:Checks': { value: { type: 'plain_text_input', value: null } },
      }),
    );
    await until('the answer', () =>
      postsIn(event.ts).find((m) => String(m.text).includes('Environment: production; Checks: tests')),
    );
    await until('the question edited', () =>
      slack.of('chat.update').find((u) => String(u.text).includes('answered by <@U1>')),
    );
  });

  it('numbers the options of a single question, and a typed number in the thread answers it', async () => {
    const event = mention('ask one');
    await requests.event(event);
    const message = await until('the question', () =>
      postsIn(event.ts).find((m) => JSON.stringify(m.blocks ?? '').includes('gate_answer')),
    );
    const shown = JSON.stringify(message.blocks);
    expect(shown).toContain('1. staging');
    expect(shown).toContain('Reply with a number.');
    expect(shown).toContain('Type the reply in this thread');
    await requests.event({
      type: 'message',
      channel_type: 'channel',
      user: 'U1',
      text: '2',
      ts: '1700000999.000002',
      thread_ts: event.ts,
      channel: 'C1',
    });
    await until('the answer', () =>
      postsIn(event.ts).find((m) => String(m.text).includes('Environment: production')),
    );
  });

  it('never writes the bot token or signing secret into history or logs', async () => {
    const event = mention('run `echo secret-check`');
    await requests.event(event);
    await prompt(event.ts);
    const history = JSON.stringify(
      await env.client.workflow.getHandle(workflowIdOf(event.ts)).fetchHistory(),
    );
    const logs = stack.worker.output + stack.gateway.output;
    for (const secret of ['xoxb-test-token', SECRET]) {
      expect(history).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });

  it('keeps a click made while no worker runs, and runs the tool exactly once after a restart', async () => {
    const event = mention('run `echo ran >> count.txt`');
    await requests.event(event);
    const { value } = await prompt(event.ts);
    await stack.worker.kill('SIGKILL');
    const clicked = await requests.interaction(
      click('gate_approve', value('gate_approve'), 'U1', `${slack.url}/response/9`),
    );
    expect(clicked.status).toBe(200);
    await stack.restartWorker();
    await until('the prompt edited', () =>
      slack
        .of('chat.update')
        .find(
          (u) =>
            String(JSON.stringify(u.blocks)).includes('count.txt') && String(u.text).includes('approved'),
        ),
    );
    await until('the run finished', async () => (await state(event.ts)).status === 'idle' || undefined);
    const file = path.join(sessionWorkdir(stack.env.DATA_DIR!, workflowIdOf(event.ts)), 'count.txt');
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(1);
  });
});
