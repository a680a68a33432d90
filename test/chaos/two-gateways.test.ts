/**
 * Many gateways: two gateway processes behind one address that deals requests out in turn (round-robin), and a
 * whole Slack conversation through it — mention, approval prompt, Approve, a Deny with its reason modal, typed
 * replies — while one gateway is also restarted in the middle. Every step lands on whichever gateway the
 * balancer picks; nothing may depend on which one served the step before.
 */
import { request as httpRequest, createServer, type Server } from 'node:http';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateQuery, type SessionView } from '../../workflows/session/contract';
import { FakeSlack } from '../helpers/fake-slack';
import { freePort, gatewayProcess, gatewayReady, type ManagedProcess } from '../helpers/processes';
import { click, mention, SlackRequests, submitView } from '../helpers/slack-requests';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';
import { Tally } from './summary';

const SECRET = 'two-gateways-signing-secret';
let env: TestWorkflowEnvironment;
let slack: FakeSlack;
let stack: Stack;
let second: { process: ManagedProcess; port: number };
let balancer: { server: Server; url: string; served: number[] };

/** Deals each request to the next gateway in turn, as a round-robin load balancer does. */
async function startBalancer(ports: () => number[]): Promise<typeof balancer> {
  const served: number[] = [];
  let next = 0;
  const server = createServer((req, res) => {
    const port = ports()[next++ % ports().length]!;
    served.push(port);
    const upstream = httpRequest(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, served };
}

beforeAll(async () => {
  env = await startTestTemporal();
  slack = await new FakeSlack().start();
  stack = await startStack({
    temporalAddress: env.address,
    env: { SLACK_BOT_TOKEN: 'xoxb-two', SLACK_SIGNING_SECRET: SECRET, SLACK_API_URL: `${slack.url}/api/` },
  });
  const port = await freePort();
  second = { process: gatewayProcess({ ...stack.env, PORT: String(port) }), port };
  await second.process.start(gatewayReady(port));
  balancer = await startBalancer(() => [stack.port, second.port]);
});

afterAll(async () => {
  await new Promise((resolve) => balancer?.server.close(resolve));
  await second?.process.kill('SIGTERM');
  await stack?.stop();
  await slack?.stop();
  await env?.teardown();
});

const state = (ts: string) =>
  env.client.workflow.getHandle(`session:slack:T1:C1:${ts}`).query(stateQuery) as Promise<SessionView>;
const postsIn = (ts: string) => slack.of('chat.postMessage').filter((m) => m.thread_ts === ts);

async function promptValue(ts: string, count: number, actionId: string): Promise<string> {
  const prompts = await until('an approval prompt', () => {
    const found = postsIn(ts).filter((m) => Array.isArray(m.blocks));
    return found.length >= count ? found : undefined;
  });
  const blocks = prompts[count - 1]!.blocks as {
    type: string;
    elements?: { action_id: string; value: string }[];
  }[];
  return blocks.find((b) => b.type === 'actions')!.elements!.find((e) => e.action_id === actionId)!.value;
}

describe('two gateways behind one address', () => {
  it('carries a whole Slack conversation with clicks, whichever gateway serves each step', async () => {
    const tally = new Tally();
    const requests = new SlackRequests(balancer.url, SECRET);
    const event = mention('run `echo round-robin`');
    tally.check((await requests.event(event)).status === 200, () => 'the mention was refused');

    // Approve: the prompt was posted after the mention, the click lands wherever the balancer sends it.
    const approve = await promptValue(event.ts, 1, 'gate_approve');
    const clicked = await requests.interaction(
      click('gate_approve', approve, 'U1', `${slack.url}/response/rr1`),
    );
    tally.check(clicked.status === 200, () => `approve click: ${clicked.status}`);
    await until('the first answer', () =>
      postsIn(event.ts).find((m) => String(m.text).includes('round-robin') && !m.blocks),
    );

    // One gateway restarts between the next prompt and its click (a deploy of one replica).
    await requests.event({ ...mention('run `echo second-step`'), thread_ts: event.ts });
    const deny = await promptValue(event.ts, 2, 'gate_deny');
    await second.process.kill('SIGKILL');
    second.process = gatewayProcess({ ...stack.env, PORT: String(second.port) });
    await second.process.start(gatewayReady(second.port));
    const denied = await requests.interaction(click('gate_deny', deny, 'U1', `${slack.url}/response/rr2`));
    tally.check(denied.status === 200, () => `deny click: ${denied.status}`);
    const opened = await until('the deny modal', () =>
      slack.of('views.open').find((v) => JSON.stringify(v.view).includes('gate_deny')),
    );
    const submitted = await requests.interaction(
      submitView('gate_deny', (opened.view as { private_metadata: string }).private_metadata, 'U1', {
        reason: { value: { type: 'plain_text_input', value: 'not on Fridays' } },
      }),
    );
    tally.check(submitted.status === 200, () => `deny reason: ${submitted.status}`);

    const view = await until('the denied call answered', async () => {
      const current = await state(event.ts);
      return current.status === 'idle' && current.transcript.filter((m) => m.role === 'tool').length === 2
        ? current
        : undefined;
    });
    const results = view.transcript.flatMap((m) => (m.role === 'tool' ? [m] : []));
    tally.check(results[0]?.status === 'ok', () => `first call: ${results[0]?.status}`);
    tally.check(
      results[1]?.status === 'denied' && results[1].content.includes('not on Fridays'),
      () => `second call: ${JSON.stringify(results[1])}`,
    );
    // Each message once, each call exactly one result.
    const users = view.transcript.filter((m) => m.role === 'user');
    if (users.length !== 2) tally.lost += Math.abs(users.length - 2);
    // Both gateways really served steps of this conversation.
    tally.check(
      balancer.served.includes(stack.port) && balancer.served.includes(second.port),
      () => 'the balancer used one gateway only',
    );
    tally.finish('two gateways: a Slack conversation in round-robin');
    expect(results).toHaveLength(2);
  });
});
