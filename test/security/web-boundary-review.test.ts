/**
 * Security review of the web trust boundary (issue 15), second pass: attacks web-boundary.test.ts does not
 * try, each refused. Host-header and request-target tricks, method tricks and CORS, cookies confused across
 * modes, purposes and expiry, the `?token=` page, paths that dodge the body limits, the secret in the logs.
 * One stack behind a "signing-in proxy" on loopback and one local-mode gateway (with a codec endpoint).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../infra/config';
import { CredentialService } from '../../infra/credentials/service';
import { signLoginFlow, signState, signTicket, signWebSession } from '../../infra/credentials/signed';
import { tokenFingerprint } from '../../gateways/web/auth/web-token';
import { Tally } from '../chaos/summary';
import { rawRequest, webSessionExists } from '../helpers/raw-http';
import { freePort, gatewayProcess, gatewayReady, type ManagedProcess } from '../helpers/processes';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';

let env: TestWorkflowEnvironment;
let client: Client;
let stack: Stack;
let local: {
  gateway: ManagedProcess;
  port: number;
  token: string;
  base: string;
  env: Record<string, string>;
};

beforeAll(async () => {
  env = await startTestTemporal();
  client = env.client;
  stack = await startStack({
    temporalAddress: env.address,
    policy: { approvers: ['carol'], users: { alice: { slack: ['U0ALICE01'], discord: [] } } },
  });
  const port = await freePort();
  const dataDir = path.join(stack.env.DATA_DIR!, 'local-mode');
  const localEnv = {
    ...stack.env,
    DATA_DIR: dataDir,
    VAULT_PATH: path.join(dataDir, 'vault.sqlite'),
    PORT: String(port),
    WEB_TRUSTED_USER_HEADER: '',
    WEB_TRUSTED_PROXIES: '',
    PAYLOAD_KEY: 'a'.repeat(64),
  };
  const gateway = gatewayProcess(localEnv);
  await gateway.start(gatewayReady(port));
  local = {
    gateway,
    port,
    env: localEnv,
    token: readFileSync(path.join(dataDir, 'web-token'), 'utf8').trim(),
    base: `http://localhost:${port}`,
  };
});

afterAll(async () => {
  await local?.gateway.kill('SIGTERM');
  await stack?.stop();
  await env?.teardown();
});

const exists = (sessionId: string) => webSessionExists(client, sessionId);

const json = (body: unknown) => JSON.stringify(body);
const ATTACK = 'run `touch /tmp/pwned-by-review-test`';

const raw = rawRequest;

describe('web trust boundary, second pass', () => {
  it('refuses Host names that only look like ours, absolute-form targets and X-Forwarded-Host', async () => {
    const tally = new Tally();
    const auth = { authorization: `Bearer ${local.token}`, 'content-type': 'application/json' };
    const attempts: {
      what: string;
      target: (id: string) => string;
      host: string;
      extra?: Record<string, string>;
    }[] = [
      ...[
        `localhost.:${local.port}`,
        `localhost:${local.port}.`,
        'localhost',
        `127.0.0.2:${local.port}`,
        `[::ffff:127.0.0.1]:${local.port}`,
        `[0:0:0:0:0:0:0:1]:${local.port}`,
        `localhost:0${local.port}`,
        `localhost:${local.port}@evil.example`,
        `evil.example, localhost:${local.port}`,
        '',
      ].map((host) => ({
        what: `Host "${host}"`,
        target: (id: string) => `/api/sessions/${id}/messages`,
        host,
      })),
      {
        what: 'absolute-form target naming us, foreign Host',
        target: (id) => `http://localhost:${local.port}/api/sessions/${id}/messages`,
        host: 'evil.example',
      },
      {
        what: 'X-Forwarded-Host naming us, foreign Host',
        target: (id) => `/api/sessions/${id}/messages`,
        host: 'evil.example',
        extra: { 'x-forwarded-host': `localhost:${local.port}`, forwarded: `host=localhost:${local.port}` },
      },
    ];
    for (const attempt of attempts) {
      const id = `host-${randomUUID()}`;
      const response = await raw(local.port, {
        method: 'POST',
        path: attempt.target(id),
        headers: { host: attempt.host, ...auth, ...attempt.extra },
        body: json({ text: ATTACK }),
      });
      tally.check(
        response.status === 400 || response.status === 403,
        () => `${attempt.what}: ${response.status}`,
      );
      if (await exists(id)) tally.lost++;
    }
    // The same request under our own name goes through: the refusals above are the Host check's.
    const control = `host-control-${randomUUID()}`;
    const accepted = await raw(local.port, {
      method: 'POST',
      path: `/api/sessions/${control}/messages`,
      headers: { host: `localhost:${local.port}`, ...auth },
      body: json({ text: 'hello' }),
    });
    expect(accepted.status).toBe(202);
    // The mission webhook secret (a route outside the web API's sub-app) is behind the same Host check.
    const secret = await raw(stack.port, {
      method: 'GET',
      path: `/api/missions/${randomUUID()}/webhook`,
      headers: { host: 'evil.example', 'x-forwarded-user': 'alice' },
    });
    tally.check(secret.status === 403, () => `mission webhook secret under a foreign Host: ${secret.status}`);
    tally.finish('web review: Host and request-target tricks');
  });

  it('grants no CORS and turns no safe method into a state change', async () => {
    const tally = new Tally();
    const id = `method-${randomUUID()}`;
    const host = `localhost:${local.port}`;
    const auth = { authorization: `Bearer ${local.token}` };
    const preflight = {
      origin: 'https://evil.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    };
    for (const url of [`/api/sessions/${id}/messages`, '/api/me', '/codec/decode']) {
      const response = await raw(local.port, {
        method: 'OPTIONS',
        path: url,
        headers: { host, ...preflight },
      });
      tally.check(
        response.headers['access-control-allow-origin'] === undefined,
        () => `preflight for ${url} allows ${response.headers['access-control-allow-origin']}`,
      );
    }
    const readCrossSite = await raw(local.port, {
      method: 'GET',
      path: '/api/me',
      headers: { host, ...auth, origin: 'https://evil.example' },
    });
    tally.check(
      readCrossSite.headers['access-control-allow-origin'] === undefined,
      () => `GET /api/me answers CORS to a foreign origin`,
    );
    const tricks: { method: string; path: string; headers: Record<string, string> }[] = [
      { method: 'GET', path: `/api/sessions/${id}/messages`, headers: { 'x-http-method-override': 'POST' } },
      { method: 'HEAD', path: `/api/sessions/${id}/messages`, headers: { 'x-http-method-override': 'POST' } },
      {
        method: 'PUT',
        path: `/api/sessions/${id}/messages`,
        headers: { 'content-type': 'application/json' },
      },
      {
        method: 'PATCH',
        path: `/api/sessions/${id}/messages`,
        headers: { 'content-type': 'application/json' },
      },
      {
        method: 'POST',
        path: `/api/sessions/${id}/messages?_method=GET`,
        headers: { 'content-type': 'text/plain' },
      },
      {
        method: 'POST',
        path: `/api/sessions/${id}/messages`,
        headers: { 'content-type': 'text/plain; x=application/json' },
      },
    ];
    for (const trick of tricks) {
      const response = await raw(local.port, {
        method: trick.method,
        path: trick.path,
        headers: { host, ...auth, ...trick.headers },
        ...(trick.method === 'GET' || trick.method === 'HEAD' ? {} : { body: json({ text: ATTACK }) }),
      });
      tally.check(response.status >= 400, () => `${trick.method} ${trick.path}: ${response.status}`);
    }
    if (await exists(id)) tally.lost++;
    tally.finish('web review: methods and CORS');
  });

  it('accepts no cookie that is expired, bound elsewhere, or signed for another purpose', async () => {
    const tally = new Tally();
    const service = CredentialService.fromConfig(loadConfig(local.env));
    const key = service.keys.signing;
    await service.close();
    const binding = `local:${tokenFingerprint(local.token)}`;
    const soon = Date.now() + 60_000;
    const forged: Record<string, string> = {
      expired: signWebSession(key, { userId: 'local', expiresAt: Date.now() - 1_000, binding }),
      'bound to a sign-in provider': signWebSession(key, {
        userId: 'local',
        expiresAt: soon,
        binding: 'login:corp',
      }),
      'bound to an older secret': signWebSession(key, {
        userId: 'local',
        expiresAt: soon,
        binding: `local:${tokenFingerprint(`${local.token}-old`)}`,
      }),
      'a Connect ticket': signTicket(key, {
        userId: 'local',
        provider: 'x',
        expiresAt: soon,
        channel: 'web',
      }),
      'an OAuth state': signState(key, 'a'.repeat(20), soon),
      'a sign-in flow': signLoginFlow(key, {
        state: 'a'.repeat(20),
        nonce: 'b'.repeat(20),
        verifier: 'c'.repeat(43),
        expiresAt: soon,
      }),
    };
    const host = `localhost:${local.port}`;
    for (const [what, value] of Object.entries(forged)) {
      const id = `cookie-${randomUUID()}`;
      for (const [method, url] of [
        ['GET', '/api/me'],
        ['POST', `/api/sessions/${id}/messages`],
      ] as const) {
        const response = await raw(local.port, {
          method,
          path: url,
          headers: {
            host,
            cookie: `agent_session_${local.port}=${value}`,
            'content-type': 'application/json',
            origin: `http://${host}`,
          },
          ...(method === 'POST' ? { body: json({ text: ATTACK }) } : {}),
        });
        tally.check(
          response.status === 401,
          () => `${what} as the session cookie, ${method} ${url}: ${response.status}`,
        );
      }
      if (await exists(id)) tally.lost++;
    }
    // A cookie valid at one gateway means nothing at another (its own key and mode).
    const valid = signWebSession(key, { userId: 'local', expiresAt: soon, binding });
    const elsewhere = await raw(stack.port, {
      method: 'GET',
      path: '/api/me',
      headers: { host: `localhost:${stack.port}`, cookie: `agent_session=${valid}` },
    });
    tally.check(
      elsewhere.status === 401,
      () => `local cookie at the proxy-mode gateway: ${elsewhere.status}`,
    );
    tally.finish('web review: forged and confused cookies');
  });

  it('keeps the ?token= page from redirecting elsewhere or leaking the secret', async () => {
    const tally = new Tally();
    const host = `localhost:${local.port}`;
    const open = (url: string) => raw(local.port, { method: 'GET', path: url, headers: { host } });
    for (const url of [
      `/?token=${local.token}&next=https://evil.example`,
      `/?token=${local.token}&redirect=//evil.example`,
    ]) {
      const response = await open(url);
      tally.check(response.headers.location === '/', () => `redirects to ${response.headers.location}`);
    }
    // Only the first `token` counts, only on `/`, only exactly the secret.
    for (const url of [
      `/?token=x&token=${local.token}`,
      `/app.js?token=${local.token}`,
      `/?token=${encodeURIComponent(` ${local.token}`)}`,
      `/?token=${local.token.slice(0, -1)}`,
      `//evil.example/?token=${local.token}`,
    ]) {
      const response = await open(url);
      tally.check(
        response.headers['set-cookie'] === undefined,
        () => `${url.replace(local.token, '<secret>')} set a cookie`,
      );
    }
    const refused = await open('/?token=wrong');
    tally.check(
      refused.headers['referrer-policy'] === 'no-referrer',
      () => 'the refusal page sends a Referer',
    );
    tally.check(!local.gateway.output.includes(local.token), () => 'the secret is in the gateway log');
    tally.finish('web review: the ?token= page');
  });

  it('bounds bodies whose path hides the endpoint (dot segments, double slashes)', async () => {
    const tally = new Tally();
    const big = json({ text: 'x'.repeat(200 * 1024) });
    for (const url of [
      '/codec/../api/sessions/{id}/messages',
      '/codec/%2e%2e/api/sessions/{id}/messages',
      '/codec\\..\\api/sessions/{id}/messages',
      '//api/sessions/{id}/messages',
      '/api//sessions/{id}/messages',
      '/api/./sessions/{id}/messages',
    ]) {
      const id = `bounded-${randomUUID()}`;
      for (const chunked of [true, false]) {
        const response = await raw(stack.port, {
          method: 'POST',
          path: url.replace('{id}', id),
          headers: {
            host: `localhost:${stack.port}`,
            'x-forwarded-user': 'alice',
            'content-type': 'application/json',
            origin: `http://localhost:${stack.port}`,
            ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(big.length) }),
          },
          body: big,
        }).catch(() => ({ status: 413, headers: {}, body: 'connection closed while sending' }));
        tally.check(
          response.status === 413 || response.status === 400,
          () => `${url}${chunked ? ' (chunked)' : ''}: ${response.status}`,
        );
      }
      if (await exists(id)) tally.lost++;
    }
    tally.finish('web review: body limits and path tricks');
  });
});
