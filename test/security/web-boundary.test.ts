/**
 * Security: the web trust boundary, attacked from outside. Every row counts its attempts as it goes, and
 * "lost" counts anything that got through: a session started or signalled, a transcript read, a link used.
 * One stack runs behind a "signing-in proxy" on loopback (several people); a second gateway on the same
 * task queue runs in local mode (the per-install secret) — the shape `npm start` has.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest, createServer, type Server } from 'node:http';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../infra/config';
import { CredentialService } from '../../infra/credentials/service';
import { connectUrl } from '../../gateways/oauth/links';
import { Tally } from '../chaos/summary';
import { rawRequest, webSessionExists } from '../helpers/raw-http';
import { launchBrowser } from '../helpers/browser';
import { DiscordKeys } from '../helpers/discord-requests';
import { FakeDiscord } from '../helpers/fake-discord';
import { FakeSlack } from '../helpers/fake-slack';
import { CLIENT_ID, CLIENT_SECRET, TestOAuthProvider } from '../helpers/oauth-provider';
import { freePort, gatewayProcess, gatewayReady, type ManagedProcess } from '../helpers/processes';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';

let env: TestWorkflowEnvironment;
let client: Client;
let stack: Stack;
let slack: FakeSlack;
let discord: FakeDiscord;
let provider: TestOAuthProvider;
/** The same system in local mode: its own gateway (own DATA_DIR, own secret), the stack's worker. */
let local: { gateway: ManagedProcess; port: number; token: string; base: string };

beforeAll(async () => {
  env = await startTestTemporal();
  client = env.client;
  slack = await new FakeSlack().start();
  discord = await new FakeDiscord().start();
  provider = await new TestOAuthProvider().start();
  stack = await startStack({
    temporalAddress: env.address,
    policy: {
      approvers: ['carol'],
      providers: { acme: { type: 'oauth2', displayName: 'Acme', issuer: provider.issuer } },
    },
    env: {
      OAUTH_ACME_CLIENT_ID: CLIENT_ID,
      OAUTH_ACME_CLIENT_SECRET: CLIENT_SECRET,
      SLACK_BOT_TOKEN: 'xoxb-boundary',
      SLACK_SIGNING_SECRET: 'boundary-signing-secret',
      SLACK_API_URL: `${slack.url}/api/`,
      DISCORD_BOT_TOKEN: 'discord-bot-token-for-tests',
      DISCORD_PUBLIC_KEY: new DiscordKeys().publicKeyHex,
      DISCORD_API_URL: discord.url,
      DISCORD_GATEWAY: 'off',
    },
  });
  const port = await freePort();
  const dataDir = path.join(stack.env.DATA_DIR!, 'local-mode');
  const gateway = gatewayProcess({
    ...stack.env,
    DATA_DIR: dataDir,
    VAULT_PATH: path.join(dataDir, 'vault.sqlite'),
    PORT: String(port),
    WEB_TRUSTED_USER_HEADER: '',
    WEB_TRUSTED_PROXIES: '',
    WEB_RATE_MESSAGES: '4',
    WEB_RATE_SESSIONS: '100',
  });
  await gateway.start(gatewayReady(port));
  local = {
    gateway,
    port,
    token: readFileSync(path.join(dataDir, 'web-token'), 'utf8').trim(),
    base: `http://localhost:${port}`,
  };
});

afterAll(async () => {
  await local?.gateway.kill('SIGTERM');
  await stack?.stop();
  await provider?.stop();
  await slack?.stop();
  await discord?.stop();
  await env?.teardown();
});

const exists = (sessionId: string) => webSessionExists(client, sessionId);

const json = (body: unknown) => JSON.stringify(body);
const ATTACK = 'run `touch /tmp/pwned-by-boundary-test`';

/** The status of a raw request with any Host header (fetch will not send a forged one). */
const rawStatus = async (port: number, options: Parameters<typeof rawRequest>[1]): Promise<number> =>
  (await rawRequest(port, options)).status;

/**
 * POSTs a body and returns the status, also when the server answers early and closes the connection
 * while the body is still being sent (which is what refusing an oversized body before reading it means).
 */
async function postOversized(
  port: number,
  url: string,
  headers: Record<string, string>,
  body: string,
  chunked: boolean,
): Promise<number> {
  return await new Promise((resolve, reject) => {
    let status: number | undefined;
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: url,
        headers: chunked ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        status = res.statusCode ?? 0;
        res.resume();
        res.on('end', () => resolve(status!));
        res.on('error', () => resolve(status!));
      },
    );
    req.on('error', (error) => (status === undefined ? reject(error) : resolve(status)));
    // Chunked: written in pieces with no declared length, so only counting while reading can stop it.
    if (chunked) {
      for (let i = 0; i < body.length; i += 16_384) req.write(body.slice(i, i + 16_384));
      req.end();
      return;
    }
    // Declared: the headers go first; a refusal arrives before a byte of the body is sent.
    req.flushHeaders();
    setTimeout(() => {
      if (status === undefined) req.end(body);
    }, 2_000);
  });
}

/** The local-mode cookie, as a browser gets it from the printed link. */
async function localCookie(): Promise<string> {
  const opened = await fetch(`${local.base}/?token=${local.token}`, { redirect: 'manual' });
  return (opened.headers.get('set-cookie') ?? '').split(';')[0]!;
}

describe('web trust boundary', () => {
  it('refuses every web API call without the right credentials, and signals nothing', async () => {
    const tally = new Tally();
    const cookie = await localCookie();
    const forged = cookie.replace(
      /=.*/,
      `=${Buffer.from('{"u":"local","e":9999999999999,"b":"x"}').toString('base64url')}.AAAA`,
    );
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-secret' },
      { authorization: `Bearer ${local.token}x` },
      { 'x-agent-user': 'local' },
      { 'x-forwarded-user': 'local' },
      { cookie: forged },
      { cookie: `agent_session_${local.port}=` },
    ];
    for (const headers of attempts) {
      const id = `nocreds-${randomUUID()}`;
      const calls: [string, string, unknown?][] = [
        ['GET', '/api/me'],
        ['GET', '/api/sessions'],
        ['POST', '/api/sessions', {}],
        ['POST', `/api/sessions/${id}/messages`, { text: ATTACK }],
        ['GET', `/api/sessions/${id}`],
        ['GET', `/api/sessions/${id}/stream`],
        ['POST', '/api/decisions', { workflowId: `session:web:${id}`, gateId: 'g', choice: 'approve' }],
        ['POST', '/api/answers', { workflowId: `session:web:${id}`, gateId: 'g', answers: [] }],
        ['GET', '/api/credentials'],
        ['GET', '/api/grants'],
        ['GET', `/api/missions/${randomUUID()}/webhook`],
      ];
      for (const [method, url, body] of calls) {
        const response = await fetch(`${local.base}${url}`, {
          method,
          headers: { 'content-type': 'application/json', ...headers },
          ...(body === undefined ? {} : { body: json(body) }),
        });
        tally.check(
          response.status === 401,
          () => `${method} ${url} with ${Object.keys(headers)}: ${response.status}`,
        );
      }
      // The secret is accepted on the one URL that sets the cookie, never on the API.
      const viaQuery = await fetch(`${local.base}/api/sessions/${id}/messages?token=${local.token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: json({ text: ATTACK }),
      });
      tally.check(viaQuery.status === 401, () => `?token= on the API: ${viaQuery.status}`);
      if (await exists(id)) tally.lost++;
    }
    // A wrong link sets no cookie.
    const wrongLink = await fetch(`${local.base}/?token=not-the-secret`, { redirect: 'manual' });
    tally.check(
      wrongLink.status === 401 && !wrongLink.headers.get('set-cookie'),
      () => `wrong link: ${wrongLink.status}`,
    );
    tally.finish('web: no or wrong credentials');
  });

  it('refuses cross-site requests and foreign Host names (CSRF, DNS rebinding)', async () => {
    const tally = new Tally();
    const cookie = await localCookie();
    const cases: { what: string; headers: Record<string, string>; status: number }[] = [
      {
        what: 'text/plain with the cookie',
        headers: { cookie, 'content-type': 'text/plain', origin: local.base },
        status: 415,
      },
      {
        what: 'form with the cookie',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        status: 415,
      },
      {
        what: 'no content type with bearer',
        headers: { authorization: `Bearer ${local.token}` },
        status: 415,
      },
      {
        what: 'foreign Origin with the cookie',
        headers: { cookie, 'content-type': 'application/json', origin: 'https://evil.example' },
        status: 403,
      },
      {
        what: 'foreign Origin with bearer',
        headers: {
          authorization: `Bearer ${local.token}`,
          'content-type': 'application/json',
          origin: 'http://127.0.0.1:1',
        },
        status: 403,
      },
      { what: 'cookie without Origin', headers: { cookie, 'content-type': 'application/json' }, status: 403 },
      {
        what: 'null Origin (sandboxed frame)',
        headers: { cookie, 'content-type': 'application/json', origin: 'null' },
        status: 403,
      },
    ];
    for (const attempt of cases) {
      const id = `csrf-${randomUUID()}`;
      for (const body of [json({ text: ATTACK }), json({ text: 'approve' })]) {
        const response = await fetch(`${local.base}/api/sessions/${id}/messages`, {
          method: 'POST',
          headers: attempt.headers,
          body,
        });
        tally.check(response.status === attempt.status, () => `${attempt.what}: ${response.status}`);
      }
      if (await exists(id)) tally.lost++;
    }
    // DNS rebinding: the attacker's name resolves to us, so the request arrives with the attacker's Host.
    for (const host of [
      'evil.example',
      `evil.example:${local.port}`,
      `localhost.evil.example:${local.port}`,
      `127.0.0.1.nip.io:${local.port}`,
    ]) {
      const id = `rebind-${randomUUID()}`;
      for (const [method, url, body] of [
        ['GET', '/', undefined],
        ['GET', '/api/me', undefined],
        ['POST', `/api/sessions/${id}/messages`, json({ text: ATTACK })],
      ] as const) {
        const status = await rawStatus(local.port, {
          method,
          path: url,
          headers: { host, authorization: `Bearer ${local.token}`, 'content-type': 'application/json' },
          ...(body ? { body } : {}),
        });
        tally.check(status === 403 || status === 400, () => `Host "${host}" ${method} ${url}: ${status}`);
      }
      if (await exists(id)) tally.lost++;
    }
    // The same requests from the page itself are accepted (the guards do not just refuse everything).
    const id = `same-site-${randomUUID()}`;
    const ok = await fetch(`${local.base}/api/sessions/${id}/messages`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', origin: local.base },
      body: json({ text: 'hello' }),
    });
    expect(ok.status).toBe(202);
    tally.finish('web: cross-site and foreign Host');
  });

  it('stops the two-POST attack from another origin in a real browser', async () => {
    const tally = new Tally();
    const id = `browser-csrf-${randomUUID()}`;
    const target = `${local.base}/api/sessions/${id}/messages`;
    // The attacker's page: every way a page can send a cross-site POST without a preflight, then with one.
    const attackPage = `<!doctype html><body><form id="f" method="POST" action="${target}" enctype="text/plain" target="sink">
      <input name='{"text":"${ATTACK.replace(/`/g, '&#96;')}","x":"' value='"}'></form><iframe name="sink"></iframe>
      <script>
      (async () => {
        const send = (text, init) => fetch(${JSON.stringify(target)}, { method: 'POST', credentials: 'include', body: JSON.stringify({ text }), ...init }).catch(() => {});
        await send(${JSON.stringify(ATTACK)}, { mode: 'no-cors', headers: { 'content-type': 'text/plain' } });
        await send('approve', { mode: 'no-cors', headers: { 'content-type': 'text/plain' } });
        await send(${JSON.stringify(ATTACK)}, { mode: 'no-cors' });
        await send(${JSON.stringify(ATTACK)}, { headers: { 'content-type': 'application/json' } });
        navigator.sendBeacon(${JSON.stringify(target)}, new Blob([JSON.stringify({ text: 'approve' })], { type: 'text/plain' }));
        document.getElementById('f').submit();
        setTimeout(() => { document.title = 'done'; }, 1500);
      })();
      </script></body>`;
    const attacker: Server = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end(attackPage),
    );
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    const attackerUrl = `http://127.0.0.1:${(attacker.address() as { port: number }).port}/`;
    let browser: Browser | undefined;
    try {
      browser = await launchBrowser();
      const context = await browser.newContext();
      const page = await context.newPage();
      // The victim signed in with the printed link; the chat works for them.
      await page.goto(`${local.base}/?token=${local.token}`);
      expect(page.url()).toBe(`${local.base}/`);
      await expect.poll(() => page.getByTestId('signed-in-as').textContent()).toBe('Signed in as @local');
      // Then visits the attacker's page in another tab.
      const evil = await context.newPage();
      await evil.goto(attackerUrl);
      await evil.waitForFunction("document.title === 'done'", undefined, { timeout: 30_000 });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      tally.check(!(await exists(id)), () => 'the attacker page started or signalled a session');
      if (await exists(id)) tally.lost++;
      // The victim's own page still chats (the attack failed for the right reason).
      await page.getByTestId('new-session').click();
      await page.getByTestId('message-input').fill('what time is it');
      await page.getByTestId('send').click();
      await expect
        .poll(() => page.getByTestId('assistant-message').count(), { timeout: 60_000 })
        .toBeGreaterThan(0);
      tally.check(true, () => '');
    } finally {
      await browser?.close();
      await new Promise((resolve) => attacker.close(resolve));
    }
    tally.finish('web: CSRF page in Chromium');
  });

  it("keeps one person's session from everyone else (404, not 403)", async () => {
    const tally = new Tally();
    const web = stack.web;
    const id = `alice-${randomUUID()}`;
    expect((await web.say(id, 'run `echo mine`', 'alice')).status).toBe(202);
    const gate = await web.pendingGate(id);
    for (const intruder of ['bob', 'U0ALICE01', 'web:alice', 'Alice']) {
      const attempts: [string, () => Promise<{ status: number; body?: unknown }>][] = [
        ['read', () => web.request('GET', `/sessions/${id}`, undefined, intruder)],
        ['post', () => web.say(id, 'approve', intruder)],
        ['decide', () => web.decide(id, gate.id, 'approve', {}, intruder)],
        ['always', () => web.decide(id, gate.id, 'always', { scope: 'user', pattern: '*' }, intruder)],
        [
          'answer',
          () =>
            web.request(
              'POST',
              '/answers',
              { workflowId: `session:web:${id}`, gateId: gate.id, answers: [] },
              intruder,
            ),
        ],
        [
          'revoke',
          () =>
            web.request(
              'POST',
              '/grants/revoke',
              { grantId: 'x', scope: 'session', sessionId: id },
              intruder,
            ),
        ],
        [
          'stream',
          async () => {
            // The stream of a session one may not see looks like one that has not started.
            const response = await fetch(`${web.baseUrl}/api/sessions/${id}/stream`, {
              headers: web.headers(intruder),
            });
            const reader = response.body!.getReader();
            const first = new TextDecoder().decode((await reader.read()).value);
            await reader.cancel();
            const hidden = first.includes('event: not-found') && !first.includes('echo mine');
            return { status: hidden ? 404 : response.status };
          },
        ],
      ];
      for (const [what, attempt] of attempts) {
        const response = await attempt();
        // 404 as if it did not exist; a name that cannot be anyone's (with ":") is refused outright.
        const refused = response.status === 404 || (intruder.includes(':') && response.status === 400);
        tally.check(refused, () => `${intruder} ${what}: ${response.status}`);
      }
      const listed = await web.request('GET', '/sessions', undefined, intruder);
      tally.check(
        !JSON.stringify(listed.body).includes(id),
        () => `${intruder} sees the session in the list`,
      );
    }
    // A web name shaped like a Slack id is never that Slack user.
    const me = await web.request('GET', '/me', undefined, 'U0ALICE01');
    tally.check(me.body?.userId === 'web:U0ALICE01', () => `Slack-shaped name became ${me.body?.userId}`);
    // Nothing the intruders did reached the session: the gate is still open, no message of theirs.
    const view = await web.waitFor(id, () => true, 'alice view', 10_000);
    const intruded = view.transcript.some((m) => m.role === 'user' && m.userId !== 'alice');
    const decided = view.gates.find((g) => g.id === gate.id)?.status !== 'pending';
    if (intruded || decided) tally.lost++;
    // The owner and the policy's approver do see it.
    tally.check(
      (await web.request('GET', `/sessions/${id}`, undefined, 'carol')).status === 200,
      () => 'approver',
    );
    const mine = await web.request('GET', '/sessions', undefined, 'alice');
    tally.check(JSON.stringify(mine.body).includes(id), () => 'the owner does not see her session listed');
    expect((await web.decide(id, gate.id, 'deny', {}, 'alice')).status).toBe(202);
    tally.finish("web: another person's session");
  });

  it('lets a Connect link be used only by its person, once', async () => {
    const tally = new Tally();
    const web = stack.web;
    const creds = await web.request('GET', '/credentials', undefined, 'alice');
    const webLink: string = creds.body.providers.find((p: { name: string }) => p.name === 'acme').connectUrl;
    const open = (url: string, user?: string) =>
      fetch(url, { redirect: 'manual', headers: user ? web.headers(user) : {} });
    // Someone else signed in (bob), or nobody signed in: refused, nothing started.
    const byBob = await open(webLink, 'bob');
    tally.check(byBob.status === 403, () => `web link opened by bob: ${byBob.status}`);
    tally.check((await byBob.text()).includes('belongs to someone else'), () => 'bob is not told why');
    const anonymous = await open(webLink);
    tally.check(anonymous.status === 401, () => `web link opened signed out: ${anonymous.status}`);
    for (const response of [byBob, anonymous])
      if (response.headers.get('location')?.startsWith(provider.issuer)) tally.lost++;
    // Alice herself goes on to the provider.
    const byAlice = await open(webLink, 'alice');
    tally.check(
      byAlice.status === 302 && !!byAlice.headers.get('location')?.startsWith(provider.issuer),
      () => `alice's own link: ${byAlice.status}`,
    );
    // A chat link (shown only to the clicker) works once, and never for someone signed in as another.
    const service = CredentialService.fromConfig(loadConfig(stack.env));
    try {
      const chatLink = connectUrl(service, `http://127.0.0.1:${stack.port}`, 'U0ALICE01', 'acme', {
        channel: 'chat',
      });
      const wrongPerson = await open(chatLink, 'bob');
      tally.check(wrongPerson.status === 403, () => `chat link opened by bob: ${wrongPerson.status}`);
      // Opened where no sign-in shows who opens it (a forwarded link): it asks first, naming whose agent the
      // account would serve, and starts nothing; only the deliberate "continue" goes on, once.
      const asked = await open(chatLink);
      const page = await asked.text();
      tally.attempt(
        asked.status === 200 && !asked.headers.get('location'),
        () => `a forwarded chat link went on without asking: ${asked.status}`,
      );
      tally.check(
        page.includes('You are connecting your Acme account to the agent conversations of @U0ALICE01'),
        () => `the page does not say whose agent: ${page.slice(0, 300)}`,
      );
      const ticket = new URL(chatLink).searchParams.get('ticket')!;
      // What the page gave this browser: its Strict cookie and the same value in the form.
      const cookie = (asked.headers.get('set-cookie') ?? '').split(';')[0]!;
      const confirm = /name="confirm" value="([^"]+)"/.exec(page)?.[1] ?? '';
      const go = (options: { user?: string; withPage?: boolean; origin?: string } = {}) =>
        fetch(`http://127.0.0.1:${stack.port}/oauth/acme/start`, {
          method: 'POST',
          redirect: 'manual',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            ...(options.user ? web.headers(options.user) : {}),
            ...(options.withPage === false ? {} : { cookie }),
            ...(options.origin ? { origin: options.origin } : {}),
          },
          body: new URLSearchParams({
            ticket,
            ...(options.withPage === false ? {} : { confirm }),
          }).toString(),
        });
      const bobContinues = await go({ user: 'bob' });
      tally.attempt(
        bobContinues.status === 403,
        () => `bob continued alice's chat link: ${bobContinues.status}`,
      );
      // Another site posting the ticket from a victim's browser: no page cookie (SameSite=Strict), or a foreign
      // Origin. Nothing starts.
      for (const [what, options] of [
        ['a cross-site post', { withPage: false, origin: 'https://evil.example' }],
        ['a post without the page', { withPage: false }],
        ['a foreign Origin', { origin: 'https://evil.example' }],
      ] as const) {
        const forged = await go(options);
        tally.attempt(
          forged.status === 403 && !forged.headers.get('location'),
          () => `${what}: ${forged.status}`,
        );
      }
      const first = await go();
      tally.check(first.status === 302, () => `chat link first use: ${first.status}`);
      const again = await go();
      tally.check(again.status === 400 || again.status === 403, () => `chat link reused: ${again.status}`);
      if (again.headers.get('location')) tally.lost++;
    } finally {
      await service.close();
    }
    tally.finish('oauth: Connect link opened by someone else');
  });

  it('refuses oversized bodies on every endpoint before reading them', async () => {
    const tally = new Tally();
    const KB = 1024;
    const endpoints: [string, number, string][] = [
      ['/api/sessions/big/messages', 64 * KB, 'application/json'],
      ['/api/decisions', 64 * KB, 'application/json'],
      ['/api/answers', 64 * KB, 'application/json'],
      ['/api/grants/revoke', 64 * KB, 'application/json'],
      ['/slack/events', 1024 * KB, 'application/x-www-form-urlencoded'],
      ['/discord/interactions', 64 * KB, 'application/json'],
      ['/oauth/acme/key', 16 * KB, 'application/x-www-form-urlencoded'],
      [`/hooks/missions/${randomUUID()}`, 16 * KB, 'text/plain'],
      ['/codec/decode', 4096 * KB, 'application/json'],
    ];
    for (const [url, limit, type] of endpoints) {
      const body = 'x'.repeat(limit + 1);
      // With a declared length, and streamed without one (chunked).
      for (const chunked of [false, true]) {
        const status = await postOversized(
          stack.port,
          url,
          { 'content-type': type, ...stack.web.headers('alice') },
          body,
          chunked,
        ).catch((error: Error) => `${error.message}`);
        tally.check(status === 413, () => `${url}${chunked ? ' (chunked)' : ''}: ${status}`);
      }
    }
    if (await exists('big')) tally.lost++;
    tally.finish('limits: oversized bodies');
  });

  it('rate-limits one person sending messages (429 with Retry-After)', async () => {
    const tally = new Tally();
    const id = `burst-${randomUUID()}`;
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 12; i++) {
      const response = await fetch(`${local.base}/api/sessions/${id}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${local.token}`, 'content-type': 'application/json' },
        body: json({ text: `message ${i}` }),
      });
      statuses.push(response.status);
      if (response.status === 429) retryAfter ??= response.headers.get('retry-after');
    }
    const accepted = statuses.filter((s) => s === 202).length;
    tally.check(accepted <= 5, () => `${accepted} of 12 accepted with a limit of 4 per minute`);
    tally.check(statuses.filter((s) => s === 429).length >= 7, () => `statuses ${statuses.join(',')}`);
    tally.check(Number(retryAfter) >= 1, () => `Retry-After: ${retryAfter}`);
    // Only the accepted messages reached the session.
    await until('the burst session', () => exists(id));
    const history = await client.workflow.getHandle(`session:web:${id}`).fetchHistory();
    const signals = history.events?.filter((e) => e.workflowExecutionSignaledEventAttributes).length ?? 0;
    if (signals > accepted) tally.lost += signals - accepted;
    tally.finish('limits: message burst');
  });

  it('keeps names apart: a web: name, a reserved name and a chat-shaped name are three different people', async () => {
    const tally = new Tally();
    const web = stack.web;
    const id = `names-${randomUUID()}`;
    expect((await web.say(id, 'hello', 'U0BOB0001')).status).toBe(202);
    await web.waitFor(id, () => true, 'the session', 30_000, 'U0BOB0001');
    for (const name of ['web:U0BOB0001', 'web:local', 'local', 'a:b']) {
      const read = await web.request('GET', `/sessions/${id}`, undefined, name);
      tally.check(
        read.status === 404 || read.status === 400,
        () => `${name} reads U0BOB0001's session: ${read.status}`,
      );
    }
    const me = (name: string) => web.request('GET', '/me', undefined, name);
    tally.check(
      (await me('local')).body?.userId === 'web:local',
      () => 'a proxy name "local" is the local user',
    );
    tally.check((await me('web:U0BOB0001')).status === 400, () => 'a proxy name with ":" is accepted');
    tally.finish('web: names that collide');
  });

  it('never lets a message land in a session someone else started a moment earlier (no squatting race)', async () => {
    const tally = new Tally();
    const web = stack.web;
    for (let round = 0; round < 8; round++) {
      const id = `race-${randomUUID()}`;
      const [a, b] = await Promise.all([
        web.say(id, 'mallory first', 'mallory'),
        web.say(id, 'victim first', 'victim'),
      ]);
      tally.check(
        [a.status, b.status].filter((s) => s === 202).length === 1,
        () => `both or neither accepted: ${a.status}, ${b.status}`,
      );
      const owner = a.status === 202 ? 'mallory' : 'victim';
      const view = await web.waitFor(id, () => true, 'the raced session', 30_000, owner);
      const strangers = view.transcript.filter((m) => m.role === 'user' && m.userId !== owner);
      if (strangers.length) tally.lost += strangers.length;
    }
    tally.finish('web: session squatting race');
  });

  it('bounds how many live views one person keeps open', async () => {
    const web = stack.web;
    const streams: Response[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 20 && !refused; i++) {
      const response = await fetch(`${web.baseUrl}/api/sessions/streams-${i}/stream`, {
        headers: web.headers('streamer'),
      });
      if (response.status === 429) refused = response;
      else streams.push(response);
    }
    expect(refused?.status).toBe(429);
    expect(streams.length).toBeGreaterThan(2);
    await streams[0]!.body!.cancel();
    // A closed view frees its place.
    await until('a freed stream place', async () => {
      const again = await fetch(`${web.baseUrl}/api/sessions/streams-again/stream`, {
        headers: web.headers('streamer'),
      });
      if (again.status !== 200) return false;
      await again.body?.cancel();
      return true;
    });
    for (const stream of streams.slice(1)) await stream.body?.cancel();
  });

  it('answers the codec endpoint only under its own name, and off loopback only with a token or an operator’s sign-in', async () => {
    const tally = new Tally();
    const port = await freePort();
    // Listening on every interface (allowed in proxy mode): the codec then needs a token or a sign-in.
    const codecEnv = {
      ...stack.env,
      PORT: String(port),
      HOST: '0.0.0.0',
      PAYLOAD_KEY: Buffer.alloc(32, 7).toString('base64'),
      TEMPORAL_UI_USERS: 'alice',
    };
    const codec = gatewayProcess(codecEnv);
    await codec.start(gatewayReady(port));
    try {
      const body = json({ payloads: [] });
      for (const host of ['evil.example', `evil.example:${port}`, `localhost.evil.example:${port}`]) {
        const status = await rawStatus(port, {
          method: 'POST',
          path: '/codec/decode',
          headers: { host, 'content-type': 'text/plain', 'x-forwarded-user': 'alice' },
          body,
        });
        tally.check(status === 403, () => `codec under Host ${host}: ${status}`);
      }
      // Proxy mode: not signed in is refused, signed in is served.
      const anonymous = await rawStatus(port, {
        method: 'POST',
        path: '/codec/decode',
        headers: { host: `localhost:${port}`, 'content-type': 'application/json' },
        body,
      });
      tally.check(anonymous === 401, () => `codec without a sign-in: ${anonymous}`);
      // Signed in, but not an operator: decoding would show every conversation in clear text.
      const notOperator = await rawStatus(port, {
        method: 'POST',
        path: '/codec/decode',
        headers: {
          host: `localhost:${port}`,
          'content-type': 'application/json',
          'x-forwarded-user': 'mallory',
        },
        body,
      });
      tally.check(
        notOperator === 403,
        () => `codec for a signed-in person who is not an operator: ${notOperator}`,
      );
      const signedIn = await rawStatus(port, {
        method: 'POST',
        path: '/codec/decode',
        headers: {
          host: `localhost:${port}`,
          'content-type': 'application/json',
          'x-forwarded-user': 'alice',
        },
        body,
      });
      expect(signedIn).toBe(200);
    } finally {
      await codec.kill('SIGTERM');
    }
    tally.finish('codec: foreign Host, no sign-in, and a person who is not an operator');
  });

  it('will not listen beyond loopback in local mode, and says which variable to set', async () => {
    const port = await freePort();
    const exposed = gatewayProcess({
      ...stack.env,
      PORT: String(port),
      HOST: '0.0.0.0',
      WEB_TRUSTED_USER_HEADER: '',
      WEB_TRUSTED_PROXIES: '',
    });
    await expect(exposed.start(gatewayReady(port), 30_000)).rejects.toThrow(/WEB_LOGIN/);
    expect(exposed.output).toContain('WEB_TRUSTED_USER_HEADER');
  });
});
