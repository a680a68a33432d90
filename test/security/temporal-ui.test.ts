/**
 * Security: the embedded Temporal UI of `npm start` is behind the chat's own door. It lists every conversation,
 * returns histories and signals gates, so an attacker tries it as a DNS-rebinding page would (a foreign Host, a
 * foreign Origin, no sign-in) and straight at the UI's own port; and, with several people, as someone not named
 * in TEMPORAL_UI_USERS. Real `npm start` (embedded dev server and its real UI), real Chromium. Every attempt is a
 * scoreboard row; one that reads or signals anything is lost. The printed link opens the UI in one click.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_REFUSED_HTTP_PORT, BROWSER_REFUSED_PORT } from '../../infra/config';
import { Tally } from '../chaos/summary';
import { launchBrowser } from '../helpers/browser';
import { tempDir, testEnv } from '../helpers/config';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { freePort, gatewayProcess, gatewayReady } from '../helpers/processes';
import { rawRequest } from '../helpers/raw-http';
import { startAll } from '../helpers/start-all';

const REBOUND = 'rebind.test';
let browser: Browser;
let system: Awaited<ReturnType<typeof startAll>>;
let port: number;
let token: string;
const tally = new Tally();

beforeAll(async () => {
  port = await freePort();
  const dataDir = tempDir('agent-ui-');
  // The UI's own port is the default: one browsers refuse to load.
  system = await startAll(
    {
      DATA_DIR: dataDir,
      PORT: String(port),
      TEMPORAL_PORT: String(await freePort()),
      AGENT_CONFIG: '',
      TEMPORAL_ADDRESS: '',
    },
    port,
  );
  token = readFileSync(path.join(dataDir, 'web-token'), 'utf8').trim();
  browser = await launchBrowser([`--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`]);
}, 120_000);

afterAll(async () => {
  try {
    if (tally.runs) tally.finish('temporal ui: only through the gateway, signed in, from its own pages');
  } finally {
    await browser?.close();
    await system?.stop();
  }
});

/** The cookie the printed UI link sets. */
async function signedIn(): Promise<string> {
  const opened = await fetch(`http://localhost:${port}/temporal/?token=${token}`, { redirect: 'manual' });
  return (opened.headers.get('set-cookie') ?? '').split(';')[0]!;
}

describe('the embedded Temporal UI', () => {
  it('opens from the printed link in one click, in a real browser', async () => {
    expect(system.output()).toContain(`Temporal UI:  http://localhost:${port}/temporal/?token=${token}`);
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    try {
      await page.goto(`http://localhost:${port}/temporal/?token=${token}`);
      await page.waitForURL(/\/temporal\/namespaces\/default\/workflows/, { timeout: 30_000 });
      await page.getByText('Workflows', { exact: false }).first().waitFor({ timeout: 30_000 });
      await page.screenshot({ path: path.join(__dirname, '../artifacts/temporal-ui-through-gateway.png') });
      // The UI works under its content security policy, and what runs in it cannot read the chat's API. Its one
      // refused request is its own news feed from temporal.io: an operator's UI calls no outside host.
      expect(violations.filter((text) => !text.includes('https://newsfeed.temporal.io/'))).toEqual([]);
      const chatApi = await page.evaluate(() =>
        fetch('/api/me').then(
          (r) => `read ${r.status}`,
          (error: Error) => `refused: ${error.message}`,
        ),
      );
      expect(chatApi).toMatch(/^refused/);
    } finally {
      await page.close();
    }
  });

  it('refuses a foreign Host, no sign-in, a foreign Origin, and the UI’s own port from a browser', async () => {
    const cookie = await signedIn();
    const list = '/temporal/api/v1/namespaces/default/workflows';
    const signal = '/temporal/api/v1/namespaces/default/workflows/session:web:x/signal/decide';
    type Try = { what: string; headers: Record<string, string> };
    const reads: Try[] = [
      { what: 'a foreign Host with the cookie', headers: { host: `${REBOUND}:${port}`, cookie } },
      { what: 'no sign-in', headers: { host: `localhost:${port}` } },
      { what: 'a wrong token', headers: { host: `localhost:${port}`, authorization: 'Bearer wrong' } },
    ];
    for (const { what, headers } of reads) {
      const response = await rawRequest(port, { method: 'GET', path: list, headers });
      tally.attempt(
        response.status >= 400 && !response.body.includes('executions'),
        () => `${what}: ${response.status} ${response.body.slice(0, 200)}`,
      );
    }
    const writes: Try[] = [
      {
        what: 'a foreign Origin',
        headers: { host: `localhost:${port}`, cookie, origin: `http://${REBOUND}:${port}` },
      },
      { what: 'no Origin with the cookie', headers: { host: `localhost:${port}`, cookie } },
      {
        what: 'a foreign Host',
        headers: { host: `${REBOUND}:${port}`, cookie, origin: `http://${REBOUND}:${port}` },
      },
    ];
    for (const { what, headers } of writes) {
      const response = await rawRequest(port, {
        method: 'POST',
        path: signal,
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{"input":{"payloads":[]}}',
      });
      tally.attempt(
        response.status === 403,
        () => `${what}: ${response.status} ${response.body.slice(0, 200)}`,
      );
    }

    // A DNS-rebinding page, in a real browser: its name now points at this machine.
    const page = await browser.newPage();
    try {
      const viaGateway = await page.goto(`http://${REBOUND}:${port}${list}`);
      tally.attempt(
        viaGateway?.status() === 403,
        () => `the gateway answered ${REBOUND}: ${viaGateway?.status()}`,
      );
      // The UI's own port, and the dev server's HTTP API (which takes signals as text/plain posts).
      for (const target of [
        `${BROWSER_REFUSED_PORT}${list}`,
        `${BROWSER_REFUSED_HTTP_PORT}/api/v1/namespaces`,
      ])
        for (const host of [REBOUND, '127.0.0.1', 'localhost']) {
          const direct = await page.goto(`http://${host}:${target}`).then(
            (response) => `loaded ${response?.status()}`,
            (error: Error) => error.message,
          );
          tally.attempt(/ERR_UNSAFE_PORT/.test(direct), () => `http://${host}:${target}: ${direct}`);
        }
      // They are there (this is not a closed port the browser could not reach anyway).
      const api = await rawRequest(BROWSER_REFUSED_HTTP_PORT, {
        method: 'GET',
        path: '/api/v1/namespaces/default',
        headers: { host: `127.0.0.1:${BROWSER_REFUSED_HTTP_PORT}` },
      });
      expect(api.status).toBe(200);
    } finally {
      await page.close();
    }
  });
});

describe('a Temporal UI server of its own behind the gateway, with several people (the compose shape)', () => {
  it('opens only for the people in TEMPORAL_UI_USERS, only under a name the gateway serves', async () => {
    // A Temporal server with its own UI under /temporal (as compose starts temporalio/ui with
    // TEMPORAL_UI_PUBLIC_PATH=/temporal), and a gateway of its own in proxy mode in front of it.
    const uiPort = await freePort();
    const server = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: process.env.TEMPORAL_CLI_PATH ?? 'temporal' },
        ui: true,
        uiPort,
        extraArgs: [
          '--ui-ip',
          '127.0.0.1',
          '--ui-public-path',
          '/temporal',
          '--http-port',
          String(await freePort()),
        ],
      },
    });
    const teamPort = await freePort();
    const gateway = gatewayProcess({
      ...testEnv({}),
      PORT: String(teamPort),
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_UI_UPSTREAM: `http://127.0.0.1:${uiPort}`,
      TEMPORAL_UI_USERS: 'ops',
      WEB_TRUSTED_USER_HEADER: 'x-forwarded-user',
      WEB_TRUSTED_PROXIES: '127.0.0.1',
    });
    try {
      await gateway.start(gatewayReady(teamPort));
      const as = async (user: string, host = `localhost:${teamPort}`) =>
        await rawRequest(teamPort, {
          method: 'GET',
          path: '/temporal/api/v1/namespaces',
          headers: { host, 'x-forwarded-user': user },
        });
      const bob = await as('bob');
      tally.attempt(bob.status === 403 && bob.body.includes('TEMPORAL_UI_USERS'), () => `bob: ${bob.status}`);
      const rebound = await as('ops', `${REBOUND}:${teamPort}`);
      tally.attempt(rebound.status === 403, () => `ops under a foreign Host: ${rebound.status}`);
      const ops = await as('ops');
      expect(ops.status).toBe(200);
      expect(ops.body).toContain('"name": "default"');
    } finally {
      await gateway.kill();
      await server.teardown();
    }
  });
});
