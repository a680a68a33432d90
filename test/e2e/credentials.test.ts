/**
 * Credential gates end to end: a real OAuth 2.0 provider (oauth2-mock-server) and a protected API run
 * locally; a real worker, gateway and Temporal server in between. Sign-ins are completed the way a browser
 * does (redirects followed by hand, cookies kept).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKeys } from '../../infra/credentials/keys';
import { signState } from '../../infra/credentials/signed';
import type { CredentialGate, SessionView } from '../../workflows/session/contract';
import { API_KEY, Browser, CLIENT_ID, CLIENT_SECRET, TestOAuthProvider } from '../helpers/oauth-provider';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';
import type { AuditChange, AuditEntry, AuditRecord } from '../../common/audit';

const ROOT = path.resolve(__dirname, '../..');
const VAULT_KEY = randomBytes(32).toString('base64');
let env: TestWorkflowEnvironment;
let provider: TestOAuthProvider;
let stack: Stack;

beforeAll(async () => {
  env = await startTestTemporal();
  provider = await new TestOAuthProvider().start();
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      // The protected API listens on 127.0.0.1: http_request reaches it only because the policy says so.
      allowHosts: [new URL(provider.apiUrl).host],
      // fiona may decide in anyone's conversation: she can read and fork them (and is never given their tokens).
      approvers: ['fiona'],
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
          help: 'Find it under Settings.',
          apiHosts: [new URL(provider.apiUrl).host],
        },
      },
    },
    env: {
      OAUTH_ACME_CLIENT_ID: CLIENT_ID,
      OAUTH_ACME_CLIENT_SECRET: CLIENT_SECRET,
      VAULT_KEY,
      LOG_LEVEL: 'debug',
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await provider?.stop();
  await env?.teardown();
});

const view = async (sessionId: string, user = 'alice') =>
  (await stack.web.request('GET', `/sessions/${sessionId}`, undefined, user)).body as SessionView;

async function waitingGate(
  sessionId: string,
  user = 'alice',
): Promise<CredentialGate & { connectUrl?: string }> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const v = await view(sessionId, user).catch(() => undefined);
    const gate = v?.gates?.find((g) => g.kind === 'credential' && g.status === 'pending');
    if (v?.status === 'waiting_credential' && gate) return gate as CredentialGate & { connectUrl?: string };
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`no credential gate in ${sessionId}`);
}

const toolResult = (v: SessionView) => v.transcript.find((m) => m.role === 'tool');

async function finished(sessionId: string, user = 'alice'): Promise<SessionView> {
  return await stack.web
    .waitFor(
      sessionId,
      (v) => v.status === 'idle' && v.transcript.at(-1)?.role === 'assistant' && toolResult(v) !== undefined,
      'the tool result',
      60_000,
      user,
    )
    .then(() => view(sessionId, user));
}

describe('credential gates', () => {
  it('asks to connect, completes the OAuth sign-in, and runs the waiting tool with the token', async () => {
    const sessionId = `cred-${randomBytes(4).toString('hex')}`;
    await stack.web.say(sessionId, `fetch ${provider.apiUrl}/files with acme`);
    const gate = await waitingGate(sessionId);
    expect(gate).toMatchObject({ provider: 'acme', providerName: 'Acme Files', requesterId: 'alice' });
    expect(gate.connectUrl).toMatch(/\/oauth\/acme\/start\?ticket=/);
    // Nobody else sees alice's session, let alone her link.
    expect((await stack.web.request('GET', `/sessions/${sessionId}`, undefined, 'bob')).status).toBe(404);

    const browser = new Browser(stack.web.headers('alice'));
    const signedIn = await browser.signIn(gate.connectUrl!);
    expect(signedIn.status).toBe(200);
    expect(signedIn.text).toContain('Acme Files is connected');
    const done = await finished(sessionId);
    expect(toolResult(done)).toMatchObject({
      status: 'ok',
      content: expect.stringContaining('hello johndoe'),
    });
    expect(done.gates.find((g) => g.id === gate.id)!.resolution).toMatchObject({
      outcome: 'connected',
      by: 'alice',
    });
    expect(provider.grants).toContain('authorization_code');

    // The callback works once: a replay changes nothing.
    const replay = await browser.get(signedIn.callbackUrl);
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('already completed');

    // Stored encrypted: no token appears in the vault file's bytes.
    const vaultBytes = readFileSync(`${stack.env.DATA_DIR}/vault.sqlite`).toString('latin1');
    const walBytes = (() => {
      try {
        return readFileSync(`${stack.env.DATA_DIR}/vault.sqlite-wal`).toString('latin1');
      } catch {
        return '';
      }
    })();
    for (const secret of provider.secrets) {
      expect(vaultBytes).not.toContain(secret);
      expect(walBytes).not.toContain(secret);
    }

    // The next call uses the stored token without asking again.
    await stack.web.say(sessionId, `fetch ${provider.apiUrl}/files with acme`);
    await stack.web.waitFor(
      sessionId,
      (v) =>
        v.status === 'idle' &&
        v.transcript.filter((m) => m.role === 'tool' && m.status === 'ok').length === 2,
      'the second call',
    );
    expect((await view(sessionId)).gates.filter((g) => g.kind === 'credential')).toHaveLength(1);

    // What the token read is in the model's context now: a request anywhere else asks first, though a plain GET
    // would run at once in a conversation that read nothing with a credential.
    const elsewhere = 'fetch http://127.0.0.1:9/collect';
    await stack.web.say(sessionId, elsewhere);
    const asked = await stack.web.pendingGate(sessionId);
    expect(asked).toMatchObject({ kind: 'approval', toolName: 'http_request' });
    await stack.web.decide(sessionId, asked.id, 'deny');
    const fresh = `cred-fresh-${randomBytes(4).toString('hex')}`;
    await stack.web.say(fresh, elsewhere);
    const ran = await finished(fresh);
    expect(ran.gates).toEqual([]);
    expect(toolResult(ran)).toMatchObject({
      content: expect.stringContaining('refused: http://127.0.0.1:9'),
    });

    // Disconnect: the token is gone, and the next call asks again.
    const listed = await stack.web.request('GET', '/credentials');
    expect(listed.body.providers).toContainEqual(expect.objectContaining({ name: 'acme', connected: true }));
    expect((await stack.web.request('DELETE', '/credentials/acme')).body).toEqual({ disconnected: true });
    expect((await stack.web.request('GET', '/credentials')).body.providers).toContainEqual(
      expect.objectContaining({ name: 'acme', connected: false }),
    );
    await stack.web.say(sessionId, `fetch ${provider.apiUrl}/files with acme`);
    await waitingGate(sessionId);
  });

  it('resumes only the signed-in user: two users waiting on the same provider', async () => {
    const carol = `carol-${randomBytes(3).toString('hex')}`;
    const dave = `dave-${randomBytes(3).toString('hex')}`;
    const carolSession = `cred-c-${randomBytes(4).toString('hex')}`;
    const daveSession = `cred-d-${randomBytes(4).toString('hex')}`;
    await stack.web.say(carolSession, `fetch ${provider.apiUrl}/files with acme`, carol);
    await stack.web.say(daveSession, `fetch ${provider.apiUrl}/files with acme`, dave);
    const carolGate = await waitingGate(carolSession, carol);
    await waitingGate(daveSession, dave);
    expect((await new Browser(stack.web.headers(carol)).signIn(carolGate.connectUrl!)).status).toBe(200);
    await stack.web.waitFor(
      carolSession,
      (v) => v.status === 'idle' && toolResult(v)?.status === 'ok',
      'carol resumed',
      60_000,
      carol,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const daves = await view(daveSession, dave);
    expect(daves.status).toBe('waiting_credential');
    expect(toolResult(daves)).toBeUndefined();
  });

  it("runs a fork as the person who forked it: their own sign-in is asked for, never the owner's token used", async () => {
    const owner = `erin-${randomBytes(3).toString('hex')}`;
    const sessionId = `cred-f-${randomBytes(4).toString('hex')}`;
    await stack.web.say(sessionId, `fetch ${provider.apiUrl}/files with acme`, owner);
    const gate = await waitingGate(sessionId, owner);
    expect((await new Browser(stack.web.headers(owner)).signIn(gate.connectUrl!)).status).toBe(200);
    const done = await finished(sessionId, owner);
    const answer = done.transcript.findLast((m) => m.role === 'assistant')!;
    // fiona may decide here (an approver), so she may read and fork the owner's conversation.
    const made = await stack.web.request(
      'POST',
      `/sessions/${sessionId}/fork`,
      { messageId: answer.id },
      'fiona',
    );
    expect(made.status).toBe(201);
    const forkId = made.body.sessionId as string;
    const forked = await stack.web.waitFor(forkId, (v) => v.status === 'idle', 'the fork', 30_000, 'fiona');
    // The owner's result is there as a record; fiona's own request asks for fiona's sign-in.
    expect(toolResult(forked)).toMatchObject({
      status: 'ok',
      content: expect.stringContaining('hello johndoe'),
    });
    await stack.web.say(forkId, `fetch ${provider.apiUrl}/files with acme`, 'fiona');
    const asked = await waitingGate(forkId, 'fiona');
    expect(asked).toMatchObject({ provider: 'acme', requesterId: 'fiona' });
    expect(asked.connectUrl).toMatch(/\/oauth\/acme\/start\?ticket=/);
    const waiting = await view(forkId, 'fiona');
    expect(waiting.transcript.filter((m) => m.role === 'tool')).toHaveLength(1);
  });

  it('explains every failed sign-in and changes nothing', async () => {
    const sessionId = `cred-f-${randomBytes(4).toString('hex')}`;
    const user = `erin-${randomBytes(3).toString('hex')}`;
    await stack.web.say(sessionId, `fetch ${provider.apiUrl}/files with acme`, user);
    const gate = await waitingGate(sessionId, user);
    const base = `http://127.0.0.1:${stack.port}`;

    const asUser = () => new Browser(stack.web.headers(user));
    provider.denyNextConsent();
    const denied = await asUser().signIn(gate.connectUrl!);
    expect(denied.status).toBe(400);
    expect(denied.text).toContain('Access was not granted');

    provider.failNextToken();
    const failed = await asUser().signIn(gate.connectUrl!);
    expect(failed.status).toBe(502);
    expect(failed.text).toContain('invalid_grant');

    // The callback in a browser that did not start the flow: refused, and the rightful browser still completes later.
    const starter = asUser();
    const start = await starter.get(gate.connectUrl!);
    const authorize = await starter.get(start.location!);
    const stranger = await asUser().get(authorize.location!);
    expect(stranger.status).toBe(403);
    expect(stranger.text).toContain('started by someone else');

    const forged = await new Browser().get(
      `${base}/oauth/acme/callback?code=x&state=${encodeURIComponent('eyJmIjoiYSJ9.AAAA')}`,
    );
    expect(forged.status).toBe(400);
    expect(forged.text).toContain('not valid');
    const keys = deriveKeys(Buffer.from(VAULT_KEY, 'base64'));
    const stale = signState(keys.signing, 'Z'.repeat(32), Date.now() - 1_000);
    const expired = await new Browser().get(`${base}/oauth/acme/callback?code=x&state=${stale}`);
    expect(expired.status).toBe(400);
    expect(expired.text).toContain('took too long');
    const badTicket = await new Browser().get(
      `${base}/oauth/acme/start?ticket=${encodeURIComponent(gate.connectUrl!.split('ticket=')[1]!.slice(0, -3))}`,
    );
    expect(badTicket.status).toBe(400);

    const still = await view(sessionId, user);
    expect(still.status).toBe('waiting_credential');
    expect((await stack.web.request('GET', '/credentials', undefined, user)).body.providers).toContainEqual(
      expect.objectContaining({ name: 'acme', connected: false }),
    );
    // The browser that started it finishes it.
    const finishedFlow = await starter.get(authorize.location!);
    expect(finishedFlow.status).toBe(200);
    await stack.web
      .waitFor(
        sessionId,
        (v) => v.status === 'idle' && toolResult(v)?.status === 'ok',
        'resumed',
        30_000,
        user,
      )
      .catch(async () => {
        throw new Error(JSON.stringify(await view(sessionId, user)));
      });
  });

  it('takes an API key through its form straight to the vault', async () => {
    const sessionId = `cred-k-${randomBytes(4).toString('hex')}`;
    await stack.web.say(sessionId, `fetch ${provider.apiUrl}/weather with weather`);
    const gate = await waitingGate(sessionId);
    const form = await new Browser(stack.web.headers('alice')).get(gate.connectUrl!);
    expect(form.status).toBe(200);
    expect(form.text).toContain('Find it under Settings.');
    const ticket = /name="ticket" value="([^"]+)"/.exec(form.text)![1]!.replace(/&amp;/g, '&');
    const submit = (key: string, user = 'alice') =>
      fetch(`${stack.web.baseUrl}/oauth/weather/key`, {
        method: 'POST',
        headers: stack.web.headers(user),
        body: new URLSearchParams({ ticket, key }),
      });
    expect((await submit('')).status).toBe(400);
    expect((await submit(API_KEY, 'mallory')).status).toBe(403);
    expect((await submit(API_KEY)).status).toBe(200);
    // The form works once.
    expect((await submit(API_KEY)).status).toBe(400);
    const done = await finished(sessionId);
    expect(toolResult(done)).toMatchObject({ status: 'ok', content: expect.stringContaining('sunny') });
  });

  it('resumes a session whose worker was killed while it waited for the sign-in', async () => {
    const sessionId = `cred-w-${randomBytes(4).toString('hex')}`;
    const user = `frank-${randomBytes(3).toString('hex')}`;
    await stack.web.say(sessionId, `fetch ${provider.apiUrl}/files with acme`, user);
    const gate = await waitingGate(sessionId, user);
    await stack.worker.kill('SIGKILL');
    expect((await new Browser(stack.web.headers(user)).signIn(gate.connectUrl!)).status).toBe(200);
    await stack.restartWorker();
    await stack.web.waitFor(
      sessionId,
      (v) => v.status === 'idle' && toolResult(v)?.status === 'ok',
      'resumed',
      60_000,
      user,
    );
  });

  it('puts every credential connected and disconnected in the audit trail, with nothing of the credential', async () => {
    const since = new Date(Date.now() - 1_000).toISOString();
    const user = `gail-${randomBytes(3).toString('hex')}`;
    // A sign-in at a gate, and a key pasted at another.
    const signedIn = `cred-a-${randomBytes(4).toString('hex')}`;
    await stack.web.say(signedIn, `fetch ${provider.apiUrl}/files with acme`, user);
    const oauthGate = await waitingGate(signedIn, user);
    expect((await new Browser(stack.web.headers(user)).signIn(oauthGate.connectUrl!)).status).toBe(200);
    await finished(signedIn, user);
    const keyed = `cred-b-${randomBytes(4).toString('hex')}`;
    await stack.web.say(keyed, `fetch ${provider.apiUrl}/weather with weather`, user);
    const keyGate = await waitingGate(keyed, user);
    const form = await new Browser(stack.web.headers(user)).get(keyGate.connectUrl!);
    const ticket = /name="ticket" value="([^"]+)"/.exec(form.text)![1]!.replace(/&amp;/g, '&');
    const saved = await fetch(`${stack.web.baseUrl}/oauth/weather/key`, {
      method: 'POST',
      headers: stack.web.headers(user),
      body: new URLSearchParams({ ticket, key: API_KEY }),
    });
    expect(saved.status).toBe(200);
    await finished(keyed, user);
    // Disconnected from the web page; a second disconnect removes nothing and records nothing.
    expect((await stack.web.request('DELETE', '/credentials/weather', undefined, user)).body).toEqual({
      disconnected: true,
    });
    expect((await stack.web.request('DELETE', '/credentials/weather', undefined, user)).body).toEqual({
      disconnected: false,
    });

    const exported = await until(
      'the credential changes in the export',
      async () => {
        const { stdout } = await promisify(execFile)(
          process.execPath,
          [path.join(ROOT, 'bin/agentctl.js'), 'audit', 'export', '--since', since, '--person', user],
          { env: { ...process.env, ...stack.env } },
        );
        const entries = stdout
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as AuditEntry);
        return entries.filter((e) => e.type === 'credential').length >= 3 ? { stdout, entries } : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const changes = exported.entries.filter((e): e is AuditChange => e.type === 'credential');
    expect(changes.map((c) => [c.provider, c.action, c.how])).toEqual([
      ['acme', 'connected', 'oauth'],
      ['weather', 'connected', 'api_key'],
      ['weather', 'disconnected', undefined],
    ]);
    for (const change of changes)
      expect(change).toMatchObject({ workflowId: `user:${user}`, conversation: 'user', by: { id: user } });
    // The gates that asked for them are there too, settled as connected.
    expect(
      exported.entries
        .filter((e): e is AuditRecord => e.type === 'gate')
        .map((g) => [g.gate, g.provider, g.outcome]),
    ).toEqual([
      ['credential', 'acme', 'connected'],
      ['credential', 'weather', 'connected'],
    ]);
    for (const secret of [...provider.secrets, CLIENT_SECRET, API_KEY])
      expect(exported.stdout).not.toContain(secret);
  });

  it('never writes a token, code, verifier or client secret into history, transcripts or logs', async () => {
    expect(provider.secrets.size).toBeGreaterThan(5);
    const histories: string[] = [];
    const query = `WorkflowType IN ('sessionWorkflow', 'userDirectoryWorkflow')`;
    for await (const info of env.client.workflow.list({ query }))
      histories.push(JSON.stringify(await env.client.workflow.getHandle(info.workflowId).fetchHistory()));
    expect(histories.length).toBeGreaterThan(4);
    const logs = stack.worker.output + stack.gateway.output;
    expect(logs).toContain('oauth connected');
    for (const secret of [...provider.secrets, CLIENT_SECRET, API_KEY, VAULT_KEY]) {
      for (const history of histories) expect(history).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });
});
