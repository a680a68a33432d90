/**
 * Security: malformed input at every gateway endpoint (random and mutated payloads) always gets a 4xx
 * with a message, never a 5xx, and never reaches a workflow. Each scenario counts its runs as it goes
 * (the scoreboard's figures are counted, not written down) and "lost" counts requests that were refused
 * yet reached a workflow anyway.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../infra/config';
import { webSessionIdSchema } from '../../common/ids';
import { EncryptionCodec, payloadKey } from '../../infra/temporal/codec';
import { parseDiscordSessionId } from '../../platforms/discord/ids';
import { parseSlackSessionId } from '../../platforms/slack/ids';
import { DiscordKeys, DiscordRequests, snowflake } from '../helpers/discord-requests';
import { FakeDiscord } from '../helpers/fake-discord';
import { FakeSlack } from '../helpers/fake-slack';
import { SlackRequests } from '../helpers/slack-requests';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { Tally } from '../chaos/summary';

const SECRET = 'fuzz-signing-secret';
const CODEC_TOKEN = 'fuzz-codec-token';
const PAYLOAD_KEY = randomBytes(32).toString('base64');
let env: TestWorkflowEnvironment;
/** Reads what the stack wrote: its payloads are encrypted with PAYLOAD_KEY (the codec endpoint is fuzzed too). */
let client: Client;
let slack: FakeSlack;
let stack: Stack;
let discord: FakeDiscord;
const discordKeys = new DiscordKeys();

beforeAll(async () => {
  env = await startTestTemporal();
  client = new Client({
    connection: env.connection,
    dataConverter: { payloadCodecs: [new EncryptionCodec(payloadKey(PAYLOAD_KEY))] },
  });
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
      PAYLOAD_KEY,
      CODEC_AUTH_TOKEN: CODEC_TOKEN,
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

/**
 * How many requests each endpoint gets: a few dozen in `npm test`, 10,000 in `npm run fuzz` (FUZZ_REQUESTS).
 * FUZZ_SEED shifts every generator's seed: a run is reproduced from its seed, which every failure names.
 */
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 0);
const SEED = Number(process.env.FUZZ_SEED ?? 0);
const perEndpoint = (base: number, share = 1) => (REQUESTS ? Math.ceil(REQUESTS / share) : base);
/** A scenario's name, with the seed when it is not the default one (so a failure says how to reproduce it). */
const named = (scenario: string) => (SEED ? `${scenario} [FUZZ_SEED=${SEED}]` : scenario);

/** A small deterministic generator, so a failure can be reproduced from its seed (FUZZ_SEED shifts them all). */
function random(seed: number) {
  let state = seed + SEED;
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

/** Signals a workflow received (each `WorkflowExecutionSignaled` event, signal-with-start included). */
async function signalsTo(workflowId: string): Promise<number> {
  try {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes).length;
  } catch {
    return 0; // never started
  }
}

const isClientError = (status: number) => status >= 400 && status < 500;

function parseJson(text: string): { error?: unknown } | undefined {
  try {
    return JSON.parse(text) as { error?: unknown };
  } catch {
    return undefined;
  }
}

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
    const tally = new Tally();
    let refused = 0;
    let accepted = 0; // requests taken (2xx): only these may signal the fuzz session
    for (const [path, body] of Object.entries(valid)) {
      for (let i = 0; i < perEndpoint(25); i++) {
        const payload = mutate(body, next);
        const raw = next() < 0.1 ? '{not json' : JSON.stringify(payload);
        const response = await fetch(`${stack.web.baseUrl}/api${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-user': 'fuzzer' },
          body: raw,
        });
        const text = await response.text();
        if (response.status < 400)
          accepted++; // a mutation that happens to be valid (an extra-free copy)
        else refused++;
        const explained = response.status < 400 || /\w/.test(String(parseJson(text)?.error ?? ''));
        tally.check(
          response.status < 500 && explained,
          () => `${path} answered ${response.status} to ${raw.slice(0, 200)}: ${text.slice(0, 200)}`,
        );
      }
    }
    tally.lost = Math.max(0, (await signalsTo('session:web:fuzz')) - accepted);
    tally.finish(named('malformed web API requests (fuzz)'));
    expect(refused).toBeGreaterThan(80); // the fuzz mostly sends what must be refused
    // The operator override is for namespace operators (agentctl), never for the web API.
    const escalated = await fetch(`${stack.web.baseUrl}/api/decisions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-user': 'fuzzer' },
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
        headers: { 'content-type': 'application/json', 'x-forwarded-user': 'fuzzer' },
        body: '{"text":"hi"}',
      });
      expect(response.status).toBe(400);
    }
  });

  it('refuses unsigned, wrongly signed and signed-but-garbage Slack requests without a 5xx', async () => {
    const requests = new SlackRequests(`http://127.0.0.1:${stack.port}`, SECRET);
    const next = random(7);
    const tally = new Tally();
    for (let i = 0; i < perEndpoint(20); i++) {
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
      tally.check(signed.status < 500, () => `signed event ${signed.status}: ${junk.slice(0, 200)}`);
      const forged = await requests.post(junk, 'application/json', { secret: 'nope' });
      tally.check(forged.status === 401, () => `forged event ${forged.status}: ${forged.text}`);
    }
    for (let i = 0; i < perEndpoint(20); i++) {
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
      tally.check(
        response.status < 500,
        () => `interaction ${response.status}: ${JSON.stringify(payload).slice(0, 200)}`,
      );
    }
    const garbage = await requests.post('%%%not-a-payload', 'application/x-www-form-urlencoded');
    tally.check(isClientError(garbage.status), () => `garbage form body: ${garbage.status}`);
    const list = [];
    for await (const info of client.workflow.list({
      query: `WorkflowType = 'sessionWorkflow' AND AgentChannel = 'slack'`,
    }))
      list.push(info.workflowId);
    // Well-formed mutations may start sessions; malformed coordinates never reach a workflow id.
    tally.lost = list.filter((workflowId) => !parseSlackSessionId(workflowId)).length;
    tally.finish(named('forged / malformed Slack requests'));
  });

  it('refuses forged Discord interactions and answers signed garbage with a 4xx or an ephemeral refusal', async () => {
    const requests = new DiscordRequests(`http://127.0.0.1:${stack.port}`, discordKeys);
    const next = random(11);
    const tally = new Tally();
    const channelId = snowflake();
    const valid = {
      id: snowflake(),
      type: 3,
      channel_id: channelId,
      member: { user: { id: '100000000000000001' } },
      data: { custom_id: `ga:${channelId}:f47ac10b-58cc-4372-a567-0e02b2c3d479`, component_type: 2 },
      token: 'interaction-token',
    };
    for (let i = 0; i < perEndpoint(40); i++) {
      const raw =
        next() < 0.1 ? '{not json' : JSON.stringify(mutate(i % 2 ? valid : { ...valid, type: 5 }, next));
      const signed = await requests.post(raw);
      const json = signed.json as { type?: number; data?: { flags?: number } };
      // Signed garbage: a 4xx that says why, or an ephemeral (flags 64) refusal only the clicker sees.
      const answered =
        signed.status === 200
          ? json.type === 1 || json.data?.flags === 64
          : isClientError(signed.status) && /\w/.test(signed.text);
      tally.check(
        answered,
        () => `signed ${signed.status} ${signed.text.slice(0, 150)} to ${raw.slice(0, 200)}`,
      );
      const forged = await requests.post(raw, { keys: new DiscordKeys() });
      tally.check(forged.status === 401, () => `forged ${forged.status} to ${raw.slice(0, 200)}`);
    }
    const list = [];
    for await (const info of client.workflow.list({
      query: `WorkflowType = 'sessionWorkflow' AND AgentChannel = 'discord'`,
    }))
      list.push(info.workflowId);
    tally.lost = list.filter((workflowId) => !parseDiscordSessionId(workflowId)).length;
    tally.finish(named('forged / malformed Discord interactions'));
  });

  it('answers garbage at the sign-in endpoints with an explanatory 4xx page', async () => {
    const next = random(23);
    const tally = new Tally();
    const base = `http://127.0.0.1:${stack.port}`;
    const junk = () => encodeURIComponent(String(JUNK[Math.floor(next() * JUNK.length)]).slice(0, 3_000));
    for (let i = 0; i < perEndpoint(30); i++) {
      const provider = ['acme', 'nosuch', '..', 'x'.repeat(200)][i % 4]!;
      for (const url of [
        `${base}/oauth/${provider}/start?ticket=${junk()}`,
        `${base}/oauth/${provider}/callback?state=${junk()}&code=${junk()}`,
        `${base}/oauth/${provider}/callback?error=${junk()}`,
      ]) {
        const response = await fetch(url, { redirect: 'manual' });
        const text = await response.text();
        tally.check(isClientError(response.status) && /\w/.test(text), () => `${response.status} ${url}`);
      }
      const posted = await fetch(`${base}/oauth/${provider}/key`, {
        method: 'POST',
        body: new URLSearchParams({ ticket: decodeURIComponent(junk()), key: 'k' }),
      });
      tally.check(isClientError(posted.status), () => `key form ${posted.status} for ${provider}`);
    }
    // A forged ticket or state never stores a credential for anyone.
    const vaultPath = loadConfig(stack.env).credentials.vaultPath;
    if (existsSync(vaultPath)) {
      const vault = new DatabaseSync(vaultPath, { readOnly: true });
      tally.lost = (vault.prepare('SELECT COUNT(*) AS n FROM credentials').get() as { n: number }).n;
      vault.close();
    }
    tally.finish(named('forged OAuth state / tickets (fuzz)'));
  });

  it('refuses garbage at the mission webhook, the read endpoints and the codec endpoint, and starts nothing', async () => {
    const next = random(31);
    const tally = new Tally();
    const base = `http://127.0.0.1:${stack.port}`;
    const junk = () => String(JUNK[Math.floor(next() * JUNK.length)]).slice(0, 200);
    const ids = () => [randomUUID(), junk(), 'mission:x', '../../etc/passwd', '%00', 'x'.repeat(300)];
    for (let i = 0; i < perEndpoint(5, 6); i++) {
      for (const id of ids()) {
        const path = encodeURIComponent(id);
        // Webhooks: any wrong id or secret looks the same (nothing reveals whether a mission exists).
        const hook = await fetch(`${base}/hooks/missions/${path}`, {
          method: 'POST',
          headers: { 'x-mission-secret': encodeURIComponent(junk()) || 'none' },
          body: next() < 0.5 ? junk() : 'x'.repeat(5_000),
        });
        const hookText = await hook.text();
        tally.check(
          isClientError(hook.status) && /\w/.test(hookText),
          () => `webhook ${hook.status} ${hookText} for ${id}`,
        );
        const reads: [string, string][] = [
          ['GET', `${base}/api/missions/${path}/webhook`],
          ['GET', `${base}/api/sessions/${path}`],
          ['DELETE', `${base}/api/credentials/${path}`],
        ];
        // A well-formed id's stream is a live SSE feed (for a conversation that may start later): by design.
        if (!webSessionIdSchema.safeParse(id).success)
          reads.push(['GET', `${base}/api/sessions/${path}/stream`]);
        for (const [method, url] of reads) {
          const response = await fetch(url, { method, headers: { 'x-forwarded-user': 'fuzzer' } });
          const text = await response.text();
          tally.check(
            isClientError(response.status) && /\w/.test(String(parseJson(text)?.error ?? text)),
            () => `${method} ${url} -> ${response.status} ${text.slice(0, 200)}`,
          );
        }
      }
    }
    // The codec endpoint: without the token nothing is decoded; with it, garbage gets a 400 that says why.
    for (let i = 0; i < perEndpoint(20); i++) {
      const body =
        next() < 0.2
          ? '{not json'
          : JSON.stringify(
              mutate(
                { payloads: [{ metadata: { encoding: 'YmluYXJ5L2VuY3J5cHRlZA==' }, data: junk() }] },
                next,
              ),
            );
      for (const direction of ['decode', 'encode']) {
        const anonymous = await fetch(`${base}/codec/${direction}`, { method: 'POST', body });
        tally.check(anonymous.status === 401, () => `anonymous codec ${direction}: ${anonymous.status}`);
        const response = await fetch(`${base}/codec/${direction}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${CODEC_TOKEN}`, 'content-type': 'application/json' },
          body,
        });
        const text = await response.text();
        tally.check(
          response.status === 200 || (response.status === 400 && /\w/.test(String(parseJson(text)?.error))),
          () => `codec ${direction} ${response.status} ${text.slice(0, 200)} for ${body.slice(0, 200)}`,
        );
      }
    }
    // No mission exists here, so nothing may have started one.
    tally.lost = (await client.workflow.count(`WorkflowType = 'missionWorkflow'`)).count;
    tally.finish(named('mission webhook, read and codec endpoints (fuzz)'));
  });
});
