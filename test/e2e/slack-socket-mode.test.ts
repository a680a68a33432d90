/** Slack over Socket Mode (SLACK_APP_TOKEN): the same listeners, reached through a WebSocket instead of HTTP. */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack } from '../helpers/fake-slack';
import { click, mention } from '../helpers/slack-requests';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';

let env: TestWorkflowEnvironment;
let slack: FakeSlack;
let stack: Stack;

beforeAll(async () => {
  env = await startTestTemporal();
  slack = await new FakeSlack().start();
  stack = await startStack({
    temporalAddress: env.address,
    env: {
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_APP_TOKEN: 'xapp-test-token',
      SLACK_API_URL: `${slack.url}/api/`,
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await slack?.stop();
  await env?.teardown();
});

async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('Slack in Socket Mode', () => {
  it('takes a mention and a click over the socket, with no public HTTP endpoint', async () => {
    await until('the socket connection', () => (slack.socketConnected ? true : undefined));
    const event = mention('run `echo via-socket`');
    await slack.envelope('events_api', { type: 'event_callback', team_id: 'T1', event_id: 'Ev1', event });
    const prompt = await until('the prompt', () =>
      slack.of('chat.postMessage').find((m) => m.thread_ts === event.ts && Array.isArray(m.blocks)),
    );
    const actions = (
      prompt.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]
    ).find((b) => b.type === 'actions')!;
    const approve = actions.elements!.find((e) => e.action_id === 'gate_approve')!;
    await slack.envelope(
      'interactive',
      click('gate_approve', approve.value, 'U1', `${slack.url}/response/s1`),
    );
    await until('the prompt edited', () =>
      slack.of('chat.update').find((u) => String(u.text).includes('approved by <@U1>')),
    );
    const answer = await until('the answer', () =>
      slack
        .of('chat.postMessage')
        .find((m) => m.thread_ts === event.ts && String(m.text).includes('via-socket') && !m.blocks),
    );
    expect(answer.channel).toBe('C1');
    expect((await fetch(`http://127.0.0.1:${stack.port}/slack/events`, { method: 'POST' })).status).toBe(404);
  });
});
