/**
 * Security: malformed input at every gateway endpoint (random and mutated payloads) always gets a 4xx
 * with a message, never a 5xx, and never reaches a workflow.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDiscordSessionId } from '../../gateways/discord/ids';
import { parseSlackSessionId } from '../../gateways/slack/ids';
import { DiscordKeys, DiscordRequests, snowflake } from '../helpers/discord-requests';
import { FakeDiscord } from '../helpers/fake-discord';
import { FakeSlack } from '../helpers/fake-slack';
import { SlackRequests } from '../helpers/slack-requests';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { recordChaos } from '../chaos/summary';

const SECRET = 'fuzz-signing-secret';
let env: TestWorkflowEnvironment;
let slack: FakeSlack;
let stack: Stack;
let discord: FakeDiscord;
const discordKeys = new DiscordKeys();

beforeAll(async () => {
  env = await startTestTemporal();
  slack = await new FakeSlack().start();
  discord = await new FakeDiscord().start();
  stack = await startStack({
    temporalAddress: env.address,
    env: {
      SLACK_BOT_TOKEN: 'xoxb-fuzz',
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: `${slack.url}/api/`,
      DISCORD_BOT_TOKEN: 'discord-bot-token-for-tests',
      DISCORD_PUBLIC_KEY: discordKeys.publicKeyHex,
      DISCORD_API_URL: discord.url,
      DISCORD_GATEWAY: 'off',
      OAUTH_ACME_CLIENT_ID: 'acme-client',
    },
    policy: { providers: { acme: { type: 'oauth2', issuer: 'https://id.acme.example' } } },
  });
});

afterAll(async () => {
  await stack?.stop();
  await slack?.stop();
  await discord?.stop();
  await env?.teardown();
});

/** A small deterministic generator, so a failure can be reproduced from its seed. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const JUNK: unknown[] = [
  null,
  0,
  -1,
  1e308,
  '',
  ' ',
  'x'.repeat(30_000),
  [],
  {},
  [1, 2],
  { a: { b: { c: [] } } },
  true,
  '<script>',
  '../../etc',
  '\u0000',
  'session:web:x',
];

function mutate(valid: Record<string, unknown>, next: () => number): unknown {
  const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)]!;
  const copy: Record<string, unknown> = { ...valid };
  const key = pick(Object.keys(copy));
  switch (Math.floor(next() * 4)) {
    case 0:
      delete copy[key];
      return copy;
    case 1:
      copy[key] = pick(JUNK);
      return copy;
    case 2:
      copy[`extra${Math.floor(next() * 10)}`] = pick(JUNK);
      return copy;
    default:
      return pick(JUNK);
  }
}

describe('malformed input', () => {
  it('gets a clear 4xx from every web chat endpoint', async () => {
    const next = random(42);
    const valid = {
      '/sessions/fuzz/messages': { text: 'hello', messageId: 'm1' },
      '/decisions': { workflowId: 'session:web:fuzz', gateId: 'g1', choice: 'approve' },
      '/answers': {
        workflowId: 'session:web:fuzz',
        gateId: 'g1',
        answers: [{ question: 'q', selected: [] }],
      },
      '/grants/revoke': { grantId: 'g1', scope: 'session', sessionId: 'fuzz' },
    } as Record<string, Record<string, unknown>>;
    const statuses: number[] = [];
    for (const [path, body] of Object.entries(valid)) {
      for (let i = 0; i < 25; i++) {
        const payload = mutate(body, next);
        const raw = next() < 0.1 ? '{not json' : JSON.stringify(payload);
        const response = await fetch(`${stack.web.baseUrl}/api${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-agent-user': 'fuzzer' },
          body: raw,
        });
        const text = await response.text();
        statuses.push(response.status);
        if (response.status >= 500)
          throw new Error(`${path} answered ${response.status} to ${raw.slice(0, 200)}: ${text}`);
        if (response.status < 400) continue; // a mutation that happens to be valid (e.g. an extra-free copy)
        expect(JSON.parse(text).error, `${path} ${raw.slice(0, 100)}`).toMatch(/\w/);
      }
    }
    expect(statuses.filter((s) => s >= 400 && s < 500).length).toBeGreaterThan(80);
    recordChaos({
      scenario: 'malformed web API requests (fuzz)',
      runs: statuses.length,
      passed: statuses.length,
      lost: 0,
    });
    // The operator override is for namespace operators (agentctl), never for the web API.
    const escalated = await fetch(`${stack.web.baseUrl}/api/decisions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-agent-user': 'fuzzer' },
      body: JSON.stringify({
        workflowId: 'session:web:fuzz',
        gateId: 'g1',
        choice: 'approve',
        operator: true,
      }),
    });
    expect(escalated.status).toBe(400);
    for (const id of ['bad id!', '../x', 'x'.repeat(100)]) {
      const response = await fetch(`${stack.web.baseUrl}/api/sessions/${encodeURIComponent(id)}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"text":"hi"}',
      });
      expect(response.status).toBe(400);
    }
  });

  it('refuses unsigned, wrongly signed and signed-but-garbage Slack requests without a 5xx', async () => {
    const requests = new SlackRequests(`http://127.0.0.1:${stack.port}`, SECRET);
    const next = random(7);
    for (let i = 0; i < 20; i++) {
      const junk = JSON.stringify(
        mutate(
          {
            type: 'event_callback',
            team_id: 'T1',
            event: { type: 'app_mention', user: 'U1', text: 'hi', ts: '1.1', channel: 'C1' },
          },
          next,
        ),
      );
      const signed = await requests.post(junk, 'application/json').catch((error: Error) => {
        throw new Error(`${error.message} for ${junk.slice(0, 300)}\n${stack.gateway.output.slice(-3000)}`);
      });
      expect(signed.status, junk.slice(0, 200)).toBeLessThan(500);
      const forged = await requests.post(junk, 'application/json', { secret: 'nope' });
      expect(forged.status, forged.text).toBe(401);
    }
    for (let i = 0; i < 20; i++) {
      const payload = mutate(
        {
          type: 'block_actions',
          user: { id: 'U1' },
          actions: [{ action_id: 'gate_approve', value: '{}' }],
          trigger_id: 't',
        },
        next,
      );
      const response = await requests.interaction(payload as Record<string, unknown>);
      expect(response.status, JSON.stringify(payload).slice(0, 200)).toBeLessThan(500);
    }
    const garbage = await requests.post('%%%not-a-payload', 'application/x-www-form-urlencoded');
    expect(garbage.status).toBeGreaterThanOrEqual(400);
    expect(garbage.status).toBeLessThan(500);
    const list = [];
    for await (const info of env.client.workflow.list({
      query: `WorkflowType = 'sessionWorkflow' AND AgentChannel = 'slack'`,
    }))
      list.push(info.workflowId);
    // Well-formed mutations may start sessions; malformed coordinates never reach a workflow id.
    for (const workflowId of list) expect(parseSlackSessionId(workflowId), workflowId).toBeDefined();
    recordChaos({ scenario: 'forged / malformed Slack requests', runs: 41, passed: 41, lost: 0 });
  });

  it('refuses forged Discord interactions and answers signed garbage with a 4xx or an ephemeral refusal', async () => {
    const requests = new DiscordRequests(`http://127.0.0.1:${stack.port}`, discordKeys);
    const next = random(11);
    const channelId = snowflake();
    const valid = {
      id: snowflake(),
      type: 3,
      channel_id: channelId,
      member: { user: { id: '100000000000000001' } },
      data: { custom_id: `ga:${channelId}:f47ac10b-58cc-4372-a567-0e02b2c3d479`, component_type: 2 },
      token: 'interaction-token',
    };
    for (let i = 0; i < 40; i++) {
      const raw =
        next() < 0.1 ? '{not json' : JSON.stringify(mutate(i % 2 ? valid : { ...valid, type: 5 }, next));
      const signed = await requests.post(raw);
      expect(signed.status, `${raw.slice(0, 200)}: ${signed.text}`).toBeLessThan(500);
      if (signed.status === 200 && signed.json.type !== 1)
        expect(signed.json, raw.slice(0, 200)).toMatchObject({ data: { flags: 64 } });
      else if (signed.status !== 200) expect(signed.text).toMatch(/\w/);
      const forged = await requests.post(raw, { keys: new DiscordKeys() });
      expect(forged.status).toBe(401);
    }
    const list = [];
    for await (const info of env.client.workflow.list({
      query: `WorkflowType = 'sessionWorkflow' AND AgentChannel = 'discord'`,
    }))
      list.push(info.workflowId);
    for (const workflowId of list) expect(parseDiscordSessionId(workflowId), workflowId).toBeDefined();
    recordChaos({ scenario: 'forged / malformed Discord interactions', runs: 80, passed: 80, lost: 0 });
  });

  it('answers garbage at the sign-in endpoints with an explanatory 4xx page', async () => {
    const next = random(23);
    const base = `http://127.0.0.1:${stack.port}`;
    const junk = () => encodeURIComponent(String(JUNK[Math.floor(next() * JUNK.length)]).slice(0, 3_000));
    for (let i = 0; i < 30; i++) {
      const provider = ['acme', 'nosuch', '..', 'x'.repeat(200)][i % 4]!;
      for (const url of [
        `${base}/oauth/${provider}/start?ticket=${junk()}`,
        `${base}/oauth/${provider}/callback?state=${junk()}&code=${junk()}`,
        `${base}/oauth/${provider}/callback?error=${junk()}`,
      ]) {
        const response = await fetch(url, { redirect: 'manual' });
        expect(response.status, url).toBeGreaterThanOrEqual(400);
        expect(response.status, url).toBeLessThan(500);
        expect(await response.text()).toMatch(/\w/);
      }
      const posted = await fetch(`${base}/oauth/${provider}/key`, {
        method: 'POST',
        body: new URLSearchParams({ ticket: decodeURIComponent(junk()), key: 'k' }),
      });
      expect(posted.status).toBeGreaterThanOrEqual(400);
      expect(posted.status).toBeLessThan(500);
    }
    recordChaos({ scenario: 'forged OAuth state / tickets (fuzz)', runs: 120, passed: 120, lost: 0 });
  });
});
