/**
 * MCP tool servers behind the same gates: a real stdio server and a real Streamable HTTP server that needs
 * OAuth (official SDK), a real worker, gateway and Temporal server.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CredentialGate, QuestionGate, SessionView } from '../../workflows/session/contract';
import { RemoteMcpServer } from '../helpers/mcp-http-server';
import { Browser, CLIENT_ID, CLIENT_SECRET, TestOAuthProvider } from '../helpers/oauth-provider';
import { until } from '../helpers/until';
import { historyText } from '../helpers/history';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { mcpFixture, serverDir } from '../helpers/mcp-fixtures';

const notesDir = serverDir('mcp-notes-');
const bookingDir = serverDir('mcp-booking-');
const mineDir = serverDir('mcp-mine-');
let env: TestWorkflowEnvironment;
let provider: TestOAuthProvider;
let remote: RemoteMcpServer;
/** Signs in on its own: only its URL is configured (MCP authorization discovery + registration). */
let discovered: RemoteMcpServer;
let stack: Stack;
/** Down when the sessions start, up later: sessions pick it up without a restart. */
let laterPort = 0;
let later: RemoteMcpServer | undefined;

beforeAll(async () => {
  env = await startTestTemporal();
  provider = await new TestOAuthProvider().start();
  remote = await new RemoteMcpServer(provider.issuer).start();
  discovered = await new RemoteMcpServer(provider.issuer, { audience: true, scopes: ['notes.read'] }).start();
  provider.offerRegistration();
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  laterPort = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      mcpRefreshAfter: '1s',
      providers: { acme: { type: 'oauth2', displayName: 'Acme', issuer: provider.issuer } },
      mcpServers: {
        // The operator trusts these servers' read-only hints (by default every MCP tool asks).
        notes: {
          command: 'node',
          args: [mcpFixture('mcp-notes-server.mjs'), notesDir],
          trustAnnotations: true,
        },
        // Asks the person during its calls (MCP elicitation); every tool of it needs an approval.
        booking: {
          command: 'node',
          args: [mcpFixture('mcp-asking-server.mjs'), bookingDir],
        },
        // Each person's own process, holding their token in its environment.
        mine: {
          command: 'node',
          args: [mcpFixture('mcp-notes-server.mjs'), mineDir],
          auth: 'acme',
          tokenEnv: 'NOTES_TOKEN',
          policy: 'auto',
        },
        down: { url: 'http://127.0.0.1:9/mcp' },
        remote: { url: remote.url, auth: 'acme', trustAnnotations: true },
        private: { url: discovered.url, trustAnnotations: true },
        later: { url: `http://127.0.0.1:${laterPort}/mcp`, trustAnnotations: true },
      },
    },
    env: { OAUTH_ACME_CLIENT_ID: CLIENT_ID, OAUTH_ACME_CLIENT_SECRET: CLIENT_SECRET },
  });
});

afterAll(async () => {
  await stack?.stop();
  await remote?.stop();
  await discovered?.stop();
  await later?.stop();
  await provider?.stop();
  await env?.teardown();
});

const results = (v: SessionView) =>
  v.transcript.filter((m) => m.role === 'tool') as Extract<
    SessionView['transcript'][number],
    { role: 'tool' }
  >[];

async function callTool(sessionId: string, tool: string, args: unknown) {
  const current = (await stack.web.request('GET', `/sessions/${sessionId}`)).body as SessionView | undefined;
  const before = current?.transcript ? results(current).length : 0;
  await stack.web.say(sessionId, `call ${tool} ${JSON.stringify(args)}`);
  return before;
}

/** Waits until the session's list of tools is older than the stack's `mcpRefreshAfter` (1 s): its next turn looks again. */
const olderThanRefreshAfter = () => new Promise((resolve) => setTimeout(resolve, 1_200));

const resultAfter = (sessionId: string, before: number) =>
  stack.web
    .waitFor(sessionId, (v) => v.status === 'idle' && results(v).length > before, 'the tool result')
    .then((v) => results(v).at(-1)!);

/** The tool server's question the session asks, once it is open. */
async function serverQuestion(sessionId: string): Promise<QuestionGate> {
  const view = await stack.web.waitFor(
    sessionId,
    (v) => v.gates.some((g) => g.kind === 'question' && g.status === 'pending'),
    "the server's question",
  );
  return view.gates.find((g) => g.kind === 'question' && g.status === 'pending') as QuestionGate;
}

describe('MCP tool servers', () => {
  it('lists tools as <server>__<tool>, runs read-only ones at once, asks for the rest, and says which server is down', async () => {
    const sessionId = 'mcp-basics';
    let before = await callTool(sessionId, 'notes__write_note', { name: 'todo', text: 'buy milk' });
    const gate = await stack.web.pendingGate(sessionId);
    expect(gate).toMatchObject({ kind: 'approval', toolName: 'notes__write_note' });
    await stack.web.decide(sessionId, gate.id, 'approve');
    expect(await resultAfter(sessionId, before)).toMatchObject({ status: 'ok', content: 'wrote to todo' });
    const view = (await stack.web.request('GET', `/sessions/${sessionId}`)).body as SessionView;
    expect(view.notices.some((n) => /"down" tool server is unavailable/.test(n.text))).toBe(true);

    before = await callTool(sessionId, 'notes__read_note', { name: 'todo' });
    expect(await resultAfter(sessionId, before)).toMatchObject({ status: 'ok', content: 'buy milk\n' });

    // An isError result is a tool result the model can act on.
    before = await callTool(sessionId, 'notes__read_note', { name: 'nothing' });
    expect(await resultAfter(sessionId, before)).toMatchObject({
      status: 'error',
      content: 'no note named nothing',
    });
  });

  it('looks at the tool servers again when asked, and finds a tool a server added while connected', async () => {
    const sessionId = 'mcp-refresh';
    let before = await callTool(sessionId, 'notes__read_note', { name: 'todo' });
    await resultAfter(sessionId, before);
    writeFileSync(path.join(notesDir, '.more-tools'), '');
    await new Promise((resolve) => setTimeout(resolve, 500)); // the server looks for that file every 100 ms
    before = await callTool(sessionId, 'mcp_refresh', {});
    const listed = await resultAfter(sessionId, before);
    expect(listed.status).toBe('ok');
    expect(listed.content).toMatch(/^notes: .*notes__count_notes/m);
    expect(listed.content).toMatch(/^down: unavailable/m);
    before = await callTool(sessionId, 'notes__count_notes', {});
    expect(await resultAfter(sessionId, before)).toMatchObject({
      status: 'ok',
      content: expect.stringMatching(/^\d+ notes$/),
    });
  });

  it('does not run a denied destructive call', async () => {
    const sessionId = 'mcp-deny';
    const before = await callTool(sessionId, 'notes__delete_note', { name: 'todo' });
    const gate = await stack.web.pendingGate(sessionId);
    await stack.web.decide(sessionId, gate.id, 'deny', { reason: 'keep it' });
    expect(await resultAfter(sessionId, before)).toMatchObject({ status: 'denied' });
    expect(existsSync(path.join(notesDir, 'todo.txt'))).toBe(true);
  });

  it('opens a credential gate for a server that needs OAuth, and its tools work after the sign-in', async () => {
    const sessionId = 'mcp-oauth';
    let before = await callTool(sessionId, 'remote__connect', {});
    const gate = (
      await stack.web.waitFor(
        sessionId,
        (v) => v.gates.some((g) => g.kind === 'credential' && g.status === 'pending'),
        'the Connect prompt',
      )
    ).gates.find((g) => g.kind === 'credential') as CredentialGate & { connectUrl: string };
    expect((await new Browser(stack.web.headers('alice')).signIn(gate.connectUrl)).status).toBe(200);
    expect(await resultAfter(sessionId, before)).toMatchObject({
      status: 'ok',
      content: expect.stringContaining('Connected'),
    });
    before = await callTool(sessionId, 'remote__whoami', {});
    expect(await resultAfter(sessionId, before)).toMatchObject({ status: 'ok', content: 'you are johndoe' });
    expect(remote.tokensSeen.size).toBeGreaterThan(0);
    const history = historyText(
      await env.client.workflow.getHandle(`session:web:${sessionId}`).fetchHistory(),
    );
    const logs = stack.worker.output + stack.gateway.output;
    for (const token of remote.tokensSeen) {
      expect(history).not.toContain(token);
      expect(logs).not.toContain(token);
    }
  });

  it('signs in to a server that only gives its URL: discovery, client registration, a token for that server, and a fresh sign-in when it revokes the token', async () => {
    const sessionId = 'mcp-discovery';
    const credentialGate = async () =>
      (
        await stack.web.waitFor(
          sessionId,
          (v) => v.gates.some((g) => g.kind === 'credential' && g.status === 'pending'),
          'the Connect prompt',
        )
      ).gates.find((g) => g.kind === 'credential' && g.status === 'pending') as CredentialGate & {
        connectUrl: string;
      };

    let before = await callTool(sessionId, 'private__connect', {});
    let gate = await credentialGate();
    expect(gate).toMatchObject({ provider: 'mcp-private', providerName: 'Private (MCP)' });
    expect((await new Browser(stack.web.headers('alice')).signIn(gate.connectUrl)).status).toBe(200);
    expect(await resultAfter(sessionId, before)).toMatchObject({ status: 'ok' });

    // One client was registered for our callback; the sign-in used it and asked for this server only.
    expect(provider.registrations).toHaveLength(1);
    expect(provider.registrations[0]!.redirectUris).toEqual([
      expect.stringMatching(/\/oauth\/mcp-private\/callback$/),
    ]);
    expect(provider.tokenClients).toContain(provider.registrations[0]!.clientId);
    expect(provider.authorizeResources).toContain(discovered.url);

    // The server checks the token's audience is itself, so this works only with a resource-bound token.
    before = await callTool(sessionId, 'private__whoami', {});
    expect(await resultAfter(sessionId, before)).toMatchObject({ status: 'ok', content: 'you are johndoe' });

    // The server stops accepting the token (revoked on its side): renewed with the refresh token, the call runs,
    // and nobody is asked to sign in.
    const refreshes = provider.grants.filter((g) => g === 'refresh_token').length;
    // The session looks at its servers again first (the list is older than mcpRefreshAfter): that look renews the
    // token too, so the tools stay listed.
    for (const token of discovered.tokensSeen) discovered.revoked.add(token);
    await olderThanRefreshAfter();
    before = await callTool(sessionId, 'private__whoami', {});
    expect(await resultAfter(sessionId, before)).toMatchObject({ status: 'ok', content: 'you are johndoe' });
    expect(provider.grants.filter((g) => g === 'refresh_token')).toHaveLength(refreshes + 1);
    expect(
      ((await stack.web.request('GET', `/sessions/${sessionId}`)).body as SessionView).gates.filter(
        (g) => g.kind === 'credential',
      ),
    ).toHaveLength(1); // the first sign-in's only

    // It refuses even a renewed token, found when the session looks again: the token is forgotten, the server
    // offers `connect` again and the model is told to call it; it asks the person (never "Connected" with the
    // refused token), and after the new sign-in the tool runs.
    const refreshesBefore = provider.grants.filter((g) => g === 'refresh_token').length;
    discovered.refuseAll = true;
    await olderThanRefreshAfter();
    before = await callTool(sessionId, 'private__whoami', {});
    expect(await resultAfter(sessionId, before)).toMatchObject({
      status: 'error',
      content: expect.stringContaining('call private__connect first'),
    });
    expect(provider.grants.filter((g) => g === 'refresh_token')).toHaveLength(refreshesBefore + 1);
    before = await callTool(sessionId, 'private__connect', {});
    gate = await credentialGate();
    discovered.refuseAll = false;
    expect((await new Browser(stack.web.headers('alice')).signIn(gate.connectUrl)).status).toBe(200);
    expect(await resultAfter(sessionId, before)).toMatchObject({ status: 'ok' });
    before = await callTool(sessionId, 'private__whoami', {});
    expect(await resultAfter(sessionId, before)).toMatchObject({ status: 'ok', content: 'you are johndoe' });
    expect(provider.registrations).toHaveLength(1); // the registered client is kept and reused

    const history = historyText(
      await env.client.workflow.getHandle(`session:web:${sessionId}`).fetchHistory(),
    );
    const logs = stack.worker.output + stack.gateway.output;
    for (const token of [...discovered.tokensSeen, ...provider.secrets]) {
      expect(history).not.toContain(token);
      expect(logs).not.toContain(token);
    }
  });

  it('picks up a tool server that comes up after the session started, and says so', async () => {
    const sessionId = 'mcp-later';
    let before = await callTool(sessionId, 'current_time', {});
    await resultAfter(sessionId, before);
    const notices = async () =>
      ((await stack.web.request('GET', `/sessions/${sessionId}`)).body as SessionView).notices.map(
        (n) => n.text,
      );
    expect(await notices()).toContainEqual(expect.stringMatching(/"later" tool server is unavailable/));

    later = await new RemoteMcpServer(provider.issuer, { open: true, port: laterPort }).start();
    // The worker retries a down server in the background (backoff from 1 s, at most 30 s): asked until it is back,
    // each call answered at once meanwhile ("unavailable"), never waiting on it.
    const answered = await until(
      'the server picked up',
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_200)); // older than mcpRefreshAfter
        before = await callTool(sessionId, 'later__whoami', {});
        const result = await resultAfter(sessionId, before);
        return result.status === 'ok' ? result : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(answered).toMatchObject({ status: 'ok', content: 'you are anonymous' });
    // The next look at the servers (this turn's) says it is back.
    before = await callTool(sessionId, 'later__whoami', {});
    await resultAfter(sessionId, before);
    const told = await notices();
    expect(told).toContainEqual(expect.stringMatching(/"later" tool server is back/));
    // The outage was told once, however often the session looked again.
    expect(told.filter((t) => /"later" tool server is unavailable/.test(t))).toHaveLength(1);
  });

  it('asks the person what a tool server asks during a call, refuses an answer its schema does not take, and completes the call once with the answer', async () => {
    const sessionId = 'mcp-asks';
    let before = await callTool(sessionId, 'booking__book_table', { restaurant: 'Chez Ada' });
    await stack.web.decide(sessionId, (await stack.web.pendingGate(sessionId)).id, 'approve');
    const question = await serverQuestion(sessionId);
    expect(question).toMatchObject({
      toolName: 'booking__book_table',
      requesterId: 'alice',
      approvers: [],
      asks: { server: 'booking', message: 'Booking at Chez Ada: who is it for, and when?' },
    });
    expect(question.questions.map((q) => q.label)).toEqual(['Name', 'Guests', 'Time', 'Outdoor']);
    expect(question.questions[2]!.options.map((o) => o.label)).toEqual(['Six', 'Seven', 'Eight']);
    const bookings = path.join(bookingDir, 'bookings.txt');
    expect(existsSync(bookings)).toBe(false);
    const answer = (guests: string, user = 'alice') =>
      stack.web.request(
        'POST',
        '/answers',
        {
          workflowId: `session:web:${sessionId}`,
          gateId: question.id,
          answers: [
            { question: 'Name', selected: [], custom: 'Ada' },
            { question: 'Guests', selected: [], custom: guests },
            { question: 'Time', selected: ['Seven'] },
            { question: 'Outdoor', selected: ['Yes'] },
          ],
        },
        user,
      );
    // Only the person whose call it is answers; an answer the server's schema does not take is refused in words.
    await answer('4', 'bob');
    await answer('40');
    const refused = await stack.web.waitFor(
      sessionId,
      (v) => v.notices.some((n) => /Guests" takes a whole number from 1 to 12/.test(n.text)),
      'the refusal',
    );
    expect(refused.gates.find((g) => g.id === question.id)?.status).toBe('pending');
    await answer('4');
    const result = await resultAfter(sessionId, before);
    expect(result.status).toBe('ok');
    expect(result.content).toContain(
      `@alice answered the server's question: {"name":"Ada","guests":4,"time":"19:00","outdoor":true}`,
    );
    expect(result.content).toContain('booked Chez Ada for Ada, 4 at 19:00, outside');
    expect(readFileSync(bookings, 'utf8')).toBe('Chez Ada|Ada|4|19:00|true\n');
    // Asked once (the question brought back to the person), and once more with the answer.
    expect(readFileSync(path.join(bookingDir, 'asked.txt'), 'utf8').match(/Chez Ada/g)).toHaveLength(2);

    // Declined: the server is told, and its call ends its own way.
    before = await callTool(sessionId, 'booking__book_table', { restaurant: 'Nope' });
    await stack.web.decide(sessionId, (await stack.web.pendingGate(sessionId)).id, 'approve');
    const declined = await serverQuestion(sessionId);
    await stack.web.decide(sessionId, declined.id, 'deny');
    const notBooked = await resultAfter(sessionId, before);
    expect(notBooked.content).toMatch(/@alice declined the server's question\)\nnot booked: decline$/);
    expect(readFileSync(bookings, 'utf8')).not.toContain('Nope');

    // URL mode: a link to finish at, then Done.
    before = await callTool(sessionId, 'booking__link_account', {});
    await stack.web.decide(sessionId, (await stack.web.pendingGate(sessionId)).id, 'approve');
    const link = await serverQuestion(sessionId);
    expect(link.asks).toMatchObject({ url: 'https://accounts.example.com/link?session=abc' });
    await stack.web.request('POST', '/answers', {
      workflowId: `session:web:${sessionId}`,
      gateId: link.id,
      answers: [{ question: 'Done', selected: ['Done'] }],
    });
    expect((await resultAfter(sessionId, before)).content).toMatch(/linked$/);
  });

  it("starts each person's own stdio server process with their token in its environment, and never shows the token", async () => {
    const toolResult = async (sessionId: string, user: string, tool: string) => {
      const count = async () => {
        const v = (await stack.web.request('GET', `/sessions/${sessionId}`, undefined, user)).body as
          SessionView | undefined;
        return v?.transcript ? results(v).length : 0;
      };
      const before = await count();
      await stack.web.say(sessionId, `call ${tool} {}`, user);
      const view = await stack.web.waitFor(
        sessionId,
        (v) =>
          (v.status === 'idle' && results(v).length > before) || v.gates.some((g) => g.status === 'pending'),
        `${tool} for ${user}`,
        60_000,
        user,
      );
      const gate = view.gates.find((g) => g.kind === 'credential' && g.status === 'pending') as
        (CredentialGate & { connectUrl: string }) | undefined;
      if (gate) {
        expect((await new Browser(stack.web.headers(user)).signIn(gate.connectUrl)).status).toBe(200);
        await stack.web.waitFor(
          sessionId,
          (v) => v.status === 'idle' && results(v).length > before,
          'connected',
          60_000,
          user,
        );
      }
      const done = await stack.web.waitFor(sessionId, (v) => v.status === 'idle', 'idle', 60_000, user);
      return results(done).at(-1)!;
    };
    // Two people who have not signed in to Acme anywhere yet: until they do, each is offered only the connect tool.
    expect((await toolResult('mcp-mine-erin', 'erin', 'mine__connect')).content).toContain('Connected');
    expect((await toolResult('mcp-mine-frank', 'frank', 'mine__connect')).content).toContain('Connected');
    const parse = (content: string) => /^token (\w+) pid (\d+)$/.exec(content)!.slice(1) as [string, string];
    const [erinHash, erinPid] = parse(
      (await toolResult('mcp-mine-erin', 'erin', 'mine__token_check')).content,
    );
    const [frankHash, frankPid] = parse(
      (await toolResult('mcp-mine-frank', 'frank', 'mine__token_check')).content,
    );
    expect(erinPid).not.toBe(frankPid);
    expect(erinHash).not.toBe(frankHash);
    // Each process holds its person's token (as the provider issued it to them), and erin's is used again.
    const tokenOf = (pid: string) => readFileSync(path.join(mineDir, `token-${pid}.txt`), 'utf8');
    const digest = (token: string) => createHash('sha256').update(token).digest('hex').slice(0, 12);
    expect(digest(tokenOf(erinPid))).toBe(erinHash);
    expect(digest(tokenOf(frankPid))).toBe(frankHash);
    expect(parse((await toolResult('mcp-mine-erin', 'erin', 'mine__token_check')).content)).toEqual([
      erinHash,
      erinPid,
    ]);
    // A server whose error output says the token: the conversation gets it redacted.
    const leaked = await toolResult('mcp-mine-erin', 'erin', 'mine__token_error');
    expect(leaked).toMatchObject({
      status: 'error',
      content: 'upstream refused token [credential redacted]',
    });
    const histories = JSON.stringify(
      await Promise.all(
        ['erin', 'frank'].map((who) =>
          env.client.workflow.getHandle(`session:web:mcp-mine-${who}`).fetchHistory(),
        ),
      ),
    );
    const logs = stack.worker.output + stack.gateway.output;
    for (const token of [tokenOf(erinPid), tokenOf(frankPid)]) {
      expect(histories).not.toContain(token);
      expect(logs).not.toContain(token);
    }
  });

  it('never runs a call twice when the worker is killed during it', async () => {
    const sessionId = 'mcp-kill';
    const before = await callTool(sessionId, 'notes__slow_write', { name: 'slow', seconds: 3 });
    const gate = await stack.web.pendingGate(sessionId);
    await stack.web.decide(sessionId, gate.id, 'approve');
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // the call is under way
    await stack.worker.kill('SIGKILL');
    await stack.restartWorker();
    const result = await resultAfter(sessionId, before);
    const file = path.join(notesDir, 'slow.txt');
    const lines = existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : [];
    // The interrupted run is reported, not silently repeated.
    expect(lines.length).toBeLessThanOrEqual(1);
    expect(result.status === 'ok' ? lines.length : 0).toBeLessThanOrEqual(1);
    if (result.status !== 'ok') expect(result.content).toMatch(/interrupted|outcome unknown/i);
  });
});
