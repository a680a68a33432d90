/** `npm start` as a newcomer runs it: embedded Temporal persisted under DATA_DIR, clean Ctrl-C, state kept. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/config';
import { freeBrowserRefusedPort, freePort } from '../helpers/processes';
import { SseTab } from '../helpers/sse';
import { startAll } from '../helpers/start-all';
import { until } from '../helpers/until';
import { WebClient } from '../helpers/web-client';

/** Nothing accepts a TCP connection there (the gRPC port does not answer fetch either way). */
async function nothingListens(port: number): Promise<boolean> {
  return await new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

async function portClosed(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/`);
    return false;
  } catch {
    return true;
  }
}

describe('npm start', () => {
  it('runs everything embedded, stops cleanly on Ctrl-C, keeps sessions across restarts and builds the workflow bundle once', async () => {
    const [port, temporalPort] = [await freePort(), await freePort()];
    // The embedded server's UI and HTTP API listen only where browsers refuse to go (infra/config.ts).
    const uiPort = await freeBrowserRefusedPort();
    const httpPort = await freeBrowserRefusedPort([uiPort]);
    const env = {
      DATA_DIR: tempDir('agent-start-'),
      PORT: String(port),
      TEMPORAL_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(uiPort),
      TEMPORAL_HTTP_PORT: String(httpPort),
      AGENT_CONFIG: '',
      TEMPORAL_ADDRESS: '',
    };
    const first = await startAll(env, port);
    // The printed link carries the per-install secret (DATA_DIR/web-token, owner-only); opening it signs
    // the browser in with a cookie and cleans the address bar.
    const tokenFile = path.join(env.DATA_DIR, 'web-token');
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    // DATA_DIR and the embedded server's database (plain-text histories) are the account's alone.
    expect(statSync(env.DATA_DIR).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(env.DATA_DIR, 'temporal.sqlite')).mode & 0o777).toBe(0o600);
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect(first.output()).toContain(`Web chat:     http://localhost:${port}/?token=${token}`);
    // The Temporal UI is behind the same door, and its printed link signs in the same way.
    expect(first.output()).toContain(`Temporal UI:  http://localhost:${port}/temporal/?token=${token}`);
    const ui = await fetch(`http://localhost:${port}/temporal/?token=${token}`, { redirect: 'manual' });
    expect(ui.status).toBe(302);
    const uiCookie = (ui.headers.get('set-cookie') ?? '').split(';')[0]!;
    const namespaces = await fetch(`http://localhost:${port}/temporal/api/v1/namespaces`, {
      headers: { cookie: uiCookie },
    });
    expect(namespaces.status).toBe(200);
    expect(JSON.stringify(await namespaces.json())).toContain('"name":"default"');
    expect((await fetch(`http://localhost:${port}/temporal/api/v1/namespaces`)).status).toBe(401);
    const opened = await fetch(`http://localhost:${port}/?token=${token}`, { redirect: 'manual' });
    expect(opened.status).toBe(302);
    expect(opened.headers.get('location')).toBe('/');
    const cookie = opened.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    const me = await fetch(`http://localhost:${port}/api/me`, { headers: { cookie: cookie.split(';')[0]! } });
    // With no model configured, the first screen and the start say that a scripted demo answers.
    expect(await me.json()).toMatchObject({ userId: 'local', mode: 'local', demoModel: true });
    expect(first.output()).toContain('Model:        the scripted demo (not an AI)');
    expect((await fetch(`http://127.0.0.1:${port}/api/me`)).status).toBe(401);
    const page = await fetch(`http://127.0.0.1:${port}/`);
    expect(await page.text()).toContain('<div id="app"></div>');
    // The page's script: the Preact app, bundled at start, served from here (no CDN).
    const script = await fetch(`http://127.0.0.1:${port}/app.js`);
    expect(script.status).toBe(200);
    expect(await script.text()).toContain('message-input');
    const web = new WebClient(`http://127.0.0.1:${port}`, { bearer: token });
    await web.say('persisted', 'run `echo kept`');
    const gate = await web.pendingGate('persisted');
    // The embedded server caches search attributes (infra/temporal/dev-server.ts): ones registered at its start
    // are usable at once, so the first session is already findable by status in the Temporal UI.
    const connection = await Connection.connect({ address: `127.0.0.1:${temporalPort}` });
    try {
      const temporal = new Client({ connection });
      await until('the session listed as waiting for approval', async () => {
        const { count } = await temporal.workflow.count(`AgentStatus = 'waiting_approval'`);
        return count === 1;
      });
    } finally {
      await connection.close();
    }
    // A calm start: the header and nothing else; the server's own banner and output are in its log file.
    const started = first.output();
    for (const noise of ['CSP IS DISABLED', 'Temporal Server:', '[INFO]', '"level":"info"', 'webpack'])
      expect(started).not.toContain(noise);
    expect(started).toContain(`Data:         ${env.DATA_DIR}`);
    expect(readFileSync(path.join(env.DATA_DIR, 'temporal-server.log'), 'utf8')).toContain(
      'Temporal Server:',
    );
    const bundles = () =>
      readdirSync(path.join(env.DATA_DIR, 'workflow-bundles')).map(
        (file) => `${file} ${statSync(path.join(env.DATA_DIR, 'workflow-bundles', file)).mtimeMs}`,
      );
    const builtFirst = bundles();
    expect(builtFirst.length).toBeGreaterThan(0);
    const beforeStop = first.output().length;
    expect(await first.stop()).toBe(0);
    // Ctrl-C stops quietly: the server goes last, so nobody warns that it went away.
    const stopping = first.output().slice(beforeStop);
    expect(stopping).toContain('Stopped.');
    expect(stopping).not.toMatch(/WARN|warn"|error/i);
    expect(await portClosed(port)).toBe(true);
    expect(await portClosed(uiPort)).toBe(true);
    expect(await nothingListens(temporalPort)).toBe(true);

    // The first start built the workflow bundle and kept it; the second reuses it (no webpack at start).
    const second = await startAll(env, port);
    expect(bundles()).toEqual(builtFirst);
    try {
      // The default scripted model writes its answers out word by word: a newcomer sees streaming without a key.
      await web.say('streamed', 'help');
      const tab = await new SseTab(
        `http://127.0.0.1:${port}/api/sessions/streamed/stream`,
        web.headers('local'),
      ).open();
      const answer = (await web.answered('streamed')).transcript.at(-1)!;
      await tab.close();
      const partials = tab.events
        .filter((e) => e.event === 'partial')
        .map((e) => (JSON.parse(e.data) as { text: string }).text)
        .filter((text) => text.length > 0 && answer.role === 'assistant' && text.length < answer.text.length);
      expect(partials.length).toBeGreaterThan(3);
      expect(answer.role === 'assistant' && answer.text.startsWith(partials[0]!)).toBe(true);
      expect((await web.decide('persisted', gate.id, 'approve')).status).toBe(202);
      const view = await web.answered('persisted');
      expect(view.transcript.find((m) => m.role === 'tool')).toMatchObject({
        status: 'ok',
        content: expect.stringContaining('kept'),
      });
    } finally {
      expect(await second.stop()).toBe(0);
    }

    // Killed outright (no Ctrl-C, no cleanup): its embedded server does not outlive it, so the next start finds the
    // port free.
    const third = await startAll(env, port);
    expect(await third.kill()).toBe(null);
    await until('the embedded server gone with it', () => nothingListens(temporalPort), {
      timeoutMs: 20_000,
    });
  });
});
