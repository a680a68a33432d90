/**
 * What the image runs, run here: `npm run build`, the workflow bundle made by the compiled script, then
 * `node dist/workers/main.js` and `node dist/gateways/main.js` (no tsx) as docker-compose starts them —
 * against a real Temporal server and a real PostgreSQL for the vault — answering a web chat message and
 * serving the web chat's static files from dist/.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { tempDir, testEnv } from '../helpers/config';
import { startPostgres, type TestPostgres } from '../helpers/postgres';
import { freePort } from '../helpers/processes';
import { startTestTemporal } from '../helpers/temporal';
import { until } from '../helpers/until';
import { WebClient } from '../helpers/web-client';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);
const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, { command: string[] }>;
};

let env: TestWorkflowEnvironment;
let postgres: TestPostgres;
const children: { child: ChildProcess; output: () => string }[] = [];
let bundle: string;

/** A service's compose command, run from the checkout as the image runs it from /app. */
function startAsCompose(service: string, extra: Record<string, string>) {
  const [command, ...args] = compose.services[service]!.command;
  expect(command).toBe('node');
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  children.push({ child, output: () => output });
  return () => output;
}

beforeAll(async () => {
  await run('npm', ['run', 'build'], { cwd: ROOT });
  bundle = path.join(tempDir(), 'workflow-bundle.js');
  await run(process.execPath, ['dist/scripts/bundle-workflows.js', bundle, 'workflows'], { cwd: ROOT });
  [env, postgres] = await Promise.all([startTestTemporal(), startPostgres()]);
}, 300_000);

afterAll(async () => {
  for (const { child } of children) child.kill('SIGTERM');
  await Promise.all(
    children.map(({ child }) =>
      child.exitCode !== null ? undefined : new Promise((resolve) => child.once('exit', resolve)),
    ),
  );
  await postgres?.stop();
  await env?.teardown();
});

describe('the compiled build', () => {
  it('writes every file the image and docker-compose name', () => {
    for (const service of ['worker', 'gateway'])
      expect(existsSync(path.join(ROOT, compose.services[service]!.command[1]!)), service).toBe(true);
    for (const file of ['static/index.html', 'static/app.css', 'client/main.tsx'])
      expect(existsSync(path.join(ROOT, 'dist/gateways/web', file)), file).toBe(true);
    const code = readFileSync(bundle, 'utf8');
    expect(code.length).toBeGreaterThan(100_000);
    // Made from the sources, so webpack concatenated the workflow modules (a cached session costs less memory).
    expect(code).toMatch(/^;\/\/ \.\/workflows\/session\/turn\.ts$/m);
    // ...and preloaded the sources' shared modules, not compiled copies that the workflows would not use.
    expect(code).toMatch(/^\/\*\*\*\/ "\.\/workflows\/session\/state\.ts"$/m);
    expect(code).not.toMatch(/^\/\*\*\*\/ "\.\/dist\//m);
  });

  it('runs the worker and gateway from dist/ with the prebuilt bundle: a web chat message is answered', async () => {
    const port = await freePort();
    const shared = testEnv(
      {},
      {
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_TASK_QUEUE: `dist-${randomUUID()}`,
        WORKFLOW_BUNDLE_PATH: bundle,
        DATABASE_URL: await postgres.createDatabase(),
        VAULT_KEY: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'info',
        WEB_TRUSTED_USER_HEADER: 'x-forwarded-user',
        WEB_TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
      },
    );
    const worker = startAsCompose('worker', { ...shared, DATA_DIR: tempDir() });
    const gateway = startAsCompose('gateway', { ...shared, DATA_DIR: tempDir(), PORT: String(port) });
    await until('the compiled worker to start', () => worker().includes('"worker started"'), {
      timeoutMs: 90_000,
      context: worker,
    });
    const web = new WebClient(`http://127.0.0.1:${port}`);
    await until('the compiled gateway to answer', async () => (await fetch(`${web.baseUrl}/healthz`)).ok, {
      context: gateway,
      ignoreErrors: true,
    });

    const page = await fetch(`${web.baseUrl}/`, { headers: web.headers('alice') });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
    expect((await fetch(`${web.baseUrl}/app.js`, { headers: web.headers('alice') })).status).toBe(200);

    const sessionId = `dist-${randomBytes(4).toString('hex')}`;
    await web.say(sessionId, 'hello');
    const answered = await web.answered(sessionId);
    expect(answered.transcript.at(-1)).toMatchObject({ role: 'assistant' });

    // shell_execute from compiled code: the sandbox probe and the command go through the compiled launcher.
    expect(worker()).not.toContain('shell_execute will refuse every command');
    await web.say(sessionId, 'run `echo compiled-$((6*7))`');
    const gate = await web.pendingGate(sessionId);
    expect((await web.decide(sessionId, gate.id, 'approve')).status).toBe(202);
    const ran = await web.waitFor(
      sessionId,
      (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'tool'),
      'the command run',
    );
    expect(ran.transcript.find((m) => m.role === 'tool')?.content).toContain('compiled-42');
  });
});
