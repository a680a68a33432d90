/**
 * A sign-in across a deployment that shares nothing on disk: one worker and two gateways, each with its
 * own DATA_DIR, all on one PostgreSQL vault (DATABASE_URL) and one VAULT_KEY. The sign-in starts on one
 * gateway and its callback lands on the other (two gateways behind one address); the worker then runs
 * the waiting tool with the token the gateway stored.
 */
import { existsSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { CredentialGate, SessionView } from '../../workflows/session/contract';
import { tempDir, testEnv } from '../helpers/config';
import { API_KEY, Browser, CLIENT_ID, CLIENT_SECRET, TestOAuthProvider } from '../helpers/oauth-provider';
import { startPostgres, type TestPostgres } from '../helpers/postgres';
import {
  freePort,
  gatewayProcess,
  gatewayReady,
  workerProcess,
  workerReady,
  type ManagedProcess,
} from '../helpers/processes';
import { startTestTemporal } from '../helpers/temporal';
import { WebClient } from '../helpers/web-client';

let env: TestWorkflowEnvironment;
let postgres: TestPostgres;
let provider: TestOAuthProvider;
let databaseUrl: string;
const processes: ManagedProcess[] = [];
const dataDirs: string[] = [];
let gatewayA: WebClient;
let gatewayB: WebClient;

beforeAll(async () => {
  [env, postgres, provider] = await Promise.all([
    startTestTemporal(),
    startPostgres(),
    new TestOAuthProvider().start(),
  ]);
  databaseUrl = await postgres.createDatabase();
  const [portA, portB] = [await freePort(), await freePort()];
  const shared = testEnv(
    {
      allowHosts: [new URL(provider.apiUrl).host],
      providers: {
        acme: {
          type: 'oauth2',
          displayName: 'Acme Files',
          issuer: provider.issuer,
          scopes: ['files.read'],
          apiHosts: [new URL(provider.apiUrl).host],
        },
        weather: {
          type: 'api_key',
          displayName: 'Weather',
          header: 'X-Api-Key',
          apiHosts: [new URL(provider.apiUrl).host],
        },
      },
    },
    {
      DATABASE_URL: databaseUrl,
      VAULT_KEY: randomBytes(32).toString('base64'),
      OAUTH_ACME_CLIENT_ID: CLIENT_ID,
      OAUTH_ACME_CLIENT_SECRET: CLIENT_SECRET,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_TASK_QUEUE: `pg-${randomUUID()}`,
      WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
      LOG_LEVEL: 'info', // the worker says when it has started
      WEB_TRUSTED_USER_HEADER: 'x-forwarded-user',
      WEB_TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
      // Both gateways are one address to the people and to the provider's redirect.
      PUBLIC_URL: `http://127.0.0.1:${portA}`,
    },
  );
  const own = (extra: Record<string, string> = {}) => {
    const dataDir = tempDir();
    dataDirs.push(dataDir);
    return { ...shared, DATA_DIR: dataDir, ...extra };
  };
  const worker = workerProcess(own());
  const a = gatewayProcess(own({ PORT: String(portA) }));
  const b = gatewayProcess(own({ PORT: String(portB) }));
  processes.push(worker, a, b);
  await Promise.all([worker.start(workerReady), a.start(gatewayReady(portA)), b.start(gatewayReady(portB))]);
  gatewayA = new WebClient(`http://127.0.0.1:${portA}`);
  gatewayB = new WebClient(`http://127.0.0.1:${portB}`);
}, 120_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill('SIGTERM')));
  await provider?.stop();
  await postgres?.stop();
  await env?.teardown();
});

async function waitingGate(
  web: WebClient,
  sessionId: string,
): Promise<CredentialGate & { connectUrl?: string }> {
  const view = await web.waitFor(
    sessionId,
    (v) =>
      v.status === 'waiting_credential' &&
      v.gates.some((g) => g.kind === 'credential' && g.status === 'pending'),
    'the credential gate',
  );
  return view.gates.find((g) => g.kind === 'credential' && g.status === 'pending') as CredentialGate & {
    connectUrl?: string;
  };
}

describe('credentials with the vault in PostgreSQL', () => {
  it('signs in through one gateway, completes on another, and the worker runs the tool with the token', async () => {
    const sessionId = `pg-cred-${randomBytes(4).toString('hex')}`;
    await gatewayA.say(sessionId, `fetch ${provider.apiUrl}/files with acme`);
    const gate = await waitingGate(gatewayA, sessionId);
    expect(gate.connectUrl).toMatch(/\/oauth\/acme\/start\?ticket=/);

    const browser = new Browser(gatewayA.headers('alice'));
    const start = await browser.get(gate.connectUrl!);
    expect(start.status).toBe(302);
    const authorize = await browser.get(start.location!);
    expect(authorize.status).toBe(302);
    // The provider sends the browser back to the shared address; the balancer picks gateway B this time.
    const callbackOnB = authorize.location!.replace(gatewayA.baseUrl, gatewayB.baseUrl);
    const connected = await browser.get(callbackOnB);
    expect(connected.status).toBe(200);
    expect(connected.text).toContain('Acme Files is connected');
    // The OAuth state was single-use for the whole deployment: a replay on gateway A finds it used.
    const replay = await browser.get(authorize.location!);
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('already completed');

    const done = (await gatewayB.waitFor(
      sessionId,
      (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'tool'),
      'the tool result',
      60_000,
    )) as SessionView;
    expect(done.transcript.find((m) => m.role === 'tool')).toMatchObject({
      status: 'ok',
      content: expect.stringContaining('hello johndoe'),
    });
    expect((await gatewayB.request('GET', '/credentials')).body.providers).toContainEqual(
      expect.objectContaining({ name: 'acme', connected: true }),
    );

    // Nothing on any process's disk: the vault, stored encrypted, is in PostgreSQL only.
    for (const dir of dataDirs) expect(existsSync(path.join(dir, 'vault.sqlite')), dir).toBe(false);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const rows = await client.query<{ user_id: string; secret: Buffer }>(
      'SELECT user_id, secret FROM credentials',
    );
    await client.end();
    expect(rows.rows.map((r) => r.user_id)).toEqual(['alice']);
    for (const secret of provider.secrets)
      expect(rows.rows[0]!.secret.toString('latin1')).not.toContain(secret);
  });

  it('takes an API key form once for the whole deployment, whichever gateway it is posted to', async () => {
    const sessionId = `pg-key-${randomBytes(4).toString('hex')}`;
    await gatewayB.say(sessionId, `fetch ${provider.apiUrl}/weather with weather`);
    const gate = await waitingGate(gatewayB, sessionId);
    const form = await new Browser(gatewayA.headers('alice')).get(gate.connectUrl!);
    expect(form.status).toBe(200);
    const ticket = /name="ticket" value="([^"]+)"/.exec(form.text)![1]!.replace(/&amp;/g, '&');
    const submit = (web: WebClient) =>
      fetch(`${web.baseUrl}/oauth/weather/key`, {
        method: 'POST',
        headers: web.headers('alice'),
        body: new URLSearchParams({ ticket, key: API_KEY }),
      });
    expect((await submit(gatewayB)).status).toBe(200);
    expect((await submit(gatewayA)).status).toBe(400);
    const done = await gatewayA.waitFor(
      sessionId,
      (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'tool'),
      'the tool result',
    );
    expect(done.transcript.find((m) => m.role === 'tool')).toMatchObject({
      status: 'ok',
      content: expect.stringContaining('sunny'),
    });
  });
});
