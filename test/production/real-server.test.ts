/**
 * The production shape on a real Temporal server (test/helpers/real-temporal.ts): the version docker-compose.yml
 * pins, built from source, on PostgreSQL with SQL visibility, set up by compose's own job commands, with mTLS; the
 * compiled worker and gateway (dist/) with compose's environment. What the embedded dev server hides shows here:
 * a fresh server's namespace and search-attribute caches, a stopped server or history service, several processes.
 *
 * Scenarios, in order, on one PostgreSQL: fresh starts (a first message sent the moment /readyz says ready is
 * kept and answered), an approval that runs once with AgentStatus searched on SQL visibility, SIGKILL of the whole
 * server mid-wait (the outage reported to a web user in seconds), the server as four processes with only
 * `history` killed mid-wait, two workers and two gateways, and a rolling deploy of the workers onto a version
 * with a changed command sequence.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient } from '../../infra/temporal/connect';
import { buildIdOfBundle, workflowsOffVersion } from '../../infra/temporal/deployment';
import { tempDir, testEnv } from '../helpers/config';
import { nextVersionBundle } from '../helpers/next-version';
import { startPostgres, type TestPostgres } from '../helpers/postgres';
import { freePort, ManagedProcess, workerReady } from '../helpers/processes';
import { RealTemporal } from '../helpers/real-temporal';
import { until } from '../helpers/until';
import { WebClient } from '../helpers/web-client';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);
/** Fresh deployments started in a row (the bar is 10; REAL_SERVER_FRESH_STARTS changes it locally). */
const FRESH_STARTS = Number(process.env.REAL_SERVER_FRESH_STARTS ?? 10);

let postgres: TestPostgres;
let temporal: RealTemporal;
let bundle: string;
const apps: ManagedProcess[] = [];
let client: Client | undefined;

interface Worker {
  process: ManagedProcess;
  dataDir: string;
}
interface Gateway {
  process: ManagedProcess;
  web: WebClient;
  port: number;
}

/** What the operator's .env adds to compose's environment, plus the tests' policy and scripted model. */
const policy = testEnv({}, { LOG_LEVEL: 'info', WORKER_DRAIN_INTERVAL: '300ms', NODE_ENV: 'production' });

async function startWorker(extra: Record<string, string> = {}): Promise<Worker> {
  const dataDir = tempDir('real-worker-');
  const process = new ManagedProcess('worker', 'dist/workers/main.js', {
    ...temporal.appEnv('worker'),
    ...policy,
    DATA_DIR: dataDir,
    WORKFLOW_BUNDLE_PATH: bundle,
    ...extra,
  });
  apps.push(process);
  await process.start(workerReady, 90_000);
  return { process, dataDir };
}

async function startGateway(): Promise<Gateway> {
  const port = await freePort();
  const env: Record<string, string> = {
    ...temporal.appEnv('gateway'),
    ...policy,
    DATA_DIR: tempDir('real-gateway-'),
    HOST: '127.0.0.1',
    PORT: String(port),
    WEB_TRUSTED_USER_HEADER: 'x-forwarded-user',
    WEB_TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
    // Compose's metrics port is one per container; here several gateways share one host.
    GATEWAY_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
  };
  delete env.TEMPORAL_UI_UPSTREAM; // no UI container here
  const process = new ManagedProcess('gateway', 'dist/gateways/main.js', env);
  apps.push(process);
  await process.start(
    async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true,
  );
  return { process, web: new WebClient(`http://127.0.0.1:${port}`), port };
}

async function stopApps(): Promise<void> {
  await Promise.all(apps.splice(0).map((app) => app.kill('SIGKILL')));
}

async function readyz(
  gateway: Gateway,
): Promise<{ status: number; body: { ok: boolean; temporal?: string } }> {
  const response = await fetch(`http://127.0.0.1:${gateway.port}/readyz`);
  return { status: response.status, body: (await response.json()) as { ok: boolean; temporal?: string } };
}

/** Why /readyz said "not yet" on the way to ready, counted (for the log: what a fresh start waits for). */
const notYet = new Map<string, number>();

/** Polls /readyz every 20 ms; resolves at the first 200. */
async function whenReady(gateway: Gateway, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const answer = await readyz(gateway).catch((error: Error) => ({
      status: 0,
      body: { ok: false, temporal: error.message },
    }));
    if (answer.status === 200) return;
    last = JSON.stringify(answer.body);
    const reason = (answer.body.temporal ?? '').replace(/:.*/s, '');
    notYet.set(reason, (notYet.get(reason) ?? 0) + 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the gateway never became ready: ${last}\n${temporal.log()}`);
}

/**
 * A fresh deployment, as `docker compose up` makes one: schema, server, namespace, then worker and gateway
 * together. Returns as soon as the gateway serves (the worker may still be starting: people do not wait for it).
 */
async function freshDeployment(): Promise<{ worker: Promise<Worker>; gateway: Gateway }> {
  await stopApps();
  await temporal.stopAll();
  await temporal.dropDatabases();
  await temporal.setupSchema();
  temporal.start();
  await temporal.createNamespace();
  const worker = startWorker();
  worker.catch(() => {}); // awaited by the caller
  return { worker, gateway: await startGateway() };
}

const sessionId = (what: string) => `${what}-${randomBytes(4).toString('hex')}`;

/** How many times a command wrote its line in a web conversation's working directory, over every worker. */
function linesWritten(workers: Worker[], session: string, file: string): number {
  const workdir = `session:web:${session}`.replace(/[^A-Za-z0-9_.-]/g, '_');
  return workers
    .map((w) => path.join(w.dataDir, 'workdirs', workdir, file))
    .filter((full) => existsSync(full))
    .reduce((sum, full) => sum + readFileSync(full, 'utf8').split('\n').filter(Boolean).length, 0);
}

/** Asks for a command, waits for its gate; the caller decides it. */
async function openApproval(gateway: Gateway, session: string, file: string) {
  const said = await gateway.web.say(session, `run \`echo once >> ${file}\``);
  expect(said.status).toBe(202);
  return await gateway.web.pendingGate(session);
}

async function approveAndSeeItRun(gateway: Gateway, session: string, gateId: string): Promise<void> {
  const decided = await gateway.web.decide(session, gateId, 'approve');
  expect(decided.status, JSON.stringify(decided.body)).toBe(202);
  await gateway.web.waitFor(
    session,
    (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'tool'),
    'the approved command',
    90_000,
  );
}

async function temporalClient(): Promise<Client> {
  const env = temporal.appEnv('worker');
  client ??= await connectClient(temporal.address, 'default', undefined, {
    tls: {
      certPath: env.TEMPORAL_TLS_CERT_PATH!,
      keyPath: env.TEMPORAL_TLS_KEY_PATH!,
      caPath: env.TEMPORAL_TLS_CA_PATH!,
      serverName: env.TEMPORAL_TLS_SERVER_NAME!,
    },
  });
  return client;
}

beforeAll(async () => {
  await run('npm', ['run', 'build'], { cwd: ROOT });
  bundle = path.join(tempDir(), 'workflow-bundle.js');
  await run(process.execPath, ['dist/scripts/bundle-workflows.js', bundle, 'workflows'], { cwd: ROOT });
  postgres = await startPostgres();
  temporal = await RealTemporal.create(postgres); // builds the server first where no cache has it (~3 min)
}, 600_000);

afterAll(async () => {
  await stopApps();
  await client?.connection.close().catch(() => {});
  await temporal?.stopAll();
  await postgres?.stop();
});

describe('a real Temporal server, as docker-compose.yml runs it', () => {
  let worker: Worker;
  let gateway: Gateway;

  it(
    `answers a first message sent the moment /readyz says ready, on ${FRESH_STARTS} fresh deployments in a row`,
    async () => {
      const firstReplies: number[] = [];
      for (let start = 0; start < FRESH_STARTS; start++) {
        const fresh = await freshDeployment();
        gateway = fresh.gateway;
        await whenReady(gateway);
        const session = sessionId('first');
        const said = await gateway.web.say(session, 'hello');
        expect(said.status, `fresh start ${start}: ${JSON.stringify(said.body)}`).toBe(202);
        worker = await fresh.worker;
        const t = Date.now();
        const view = await gateway.web.answered(session);
        firstReplies.push(Date.now() - t);
        expect(view.transcript.at(-1)?.role).toBe('assistant');
        // The worker registered the attributes on a namespace it first did not know, and kept going.
        expect(worker.process.output).not.toMatch(/"level":"error"/);
      }
      console.log(
        `fresh starts: ${FRESH_STARTS}; first answer after readiness (ms): ${firstReplies.join(', ')}; ` +
          `/readyz said not yet: ${JSON.stringify(Object.fromEntries(notYet))}`,
      );
    },
    FRESH_STARTS * 60_000 + 60_000,
  );

  it('runs an approved command once, and finds the waiting conversation by AgentStatus on SQL visibility', async () => {
    const session = sessionId('approve');
    const gate = await openApproval(gateway, session, 'once.txt');
    const temporalClient_ = await temporalClient();
    const query = `AgentStatus = 'waiting_approval' AND AgentChannel = 'web' AND AgentOwner = 'alice'`;
    await until('the waiting conversation in SQL visibility', async () => {
      for await (const info of temporalClient_.workflow.list({ query }))
        if (info.workflowId === `session:web:${session}`) return true;
      return false;
    });
    await approveAndSeeItRun(gateway, session, gate.id);
    expect(linesWritten([worker], session, 'once.txt')).toBe(1);
  });

  it('loses nothing when the whole server is SIGKILLed mid-wait, and tells a web user at once', async () => {
    const session = sessionId('server-kill');
    const gate = await openApproval(gateway, session, 'server-kill.txt');
    await temporal.kill();

    const t = Date.now();
    const refused = await gateway.web.say(sessionId('during-outage'), 'anyone there?');
    const reportedMs = Date.now() - t;
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatch(/^Not sent: the agent's server \(Temporal\) is not answering/);
    const click = await gateway.web.decide(session, gate.id, 'approve');
    expect(click.status).toBe(503);
    expect(click.body.error).toMatch(/^Not confirmed/);
    const ready = await readyz(gateway);
    expect(ready.status).toBe(503);
    console.log(`server stopped: a web message was refused after ${reportedMs} ms`);

    temporal.start();
    await whenReady(gateway);
    await approveAndSeeItRun(gateway, session, gate.id);
    expect(linesWritten([worker], session, 'server-kill.txt')).toBe(1);
  });

  it('runs as four processes, and loses nothing when only history is SIGKILLed mid-wait (/readyz says so)', async () => {
    await temporal.kill();
    temporal.startEach();
    await whenReady(gateway);
    const session = sessionId('history-kill');
    const gate = await openApproval(gateway, session, 'history-kill.txt');

    await temporal.kill('history');
    const notReady = await until('/readyz to report the history service', async () => {
      const answer = await readyz(gateway);
      return answer.status === 503 ? answer : undefined;
    });
    expect(notReady.body.temporal).toMatch(/history service/);
    const refused = await gateway.web.say(sessionId('during-history-outage'), 'anyone there?');
    expect(refused.status).toBe(503);

    temporal.start('history');
    await whenReady(gateway);
    await approveAndSeeItRun(gateway, session, gate.id);
    expect(linesWritten([worker], session, 'history-kill.txt')).toBe(1);
  });

  it('runs each approved command once with two workers and two gateways', async () => {
    const second = { worker: await startWorker(), gateway: await startGateway() };
    await whenReady(second.gateway);
    const sessions = [sessionId('two-a'), sessionId('two-b'), sessionId('two-c')];
    for (const [i, session] of sessions.entries()) {
      const opener = i % 2 ? second.gateway : gateway;
      const decider = i % 2 ? gateway : second.gateway;
      const gate = await openApproval(opener, session, 'two.txt');
      // The same click through both gateways: one of them is "already decided".
      await Promise.all([
        decider.web.decide(session, gate.id, 'approve'),
        opener.web.decide(session, gate.id, 'approve'),
      ]);
      await decider.web.waitFor(
        session,
        (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'tool'),
        'the approved command',
      );
      expect(linesWritten([worker, second.worker], session, 'two.txt'), session).toBe(1);
    }
  });

  it('rolls the workers onto a version with a changed command sequence while a person waits', async () => {
    const taskQueue = temporal.appEnv('worker').TEMPORAL_TASK_QUEUE!;
    const bundleN1 = await nextVersionBundle();
    const session = sessionId('rolling');
    const gate = await openApproval(gateway, session, 'rolling.txt');
    const workersN = apps.filter((app) => app.name === 'worker');

    const next = await startWorker({ WORKFLOW_BUNDLE_PATH: bundleN1, TEMPORAL_DEPLOY_PROMOTE: 'manual' });
    const vN1 = { deploymentName: taskQueue, buildId: buildIdOfBundle(bundleN1) };
    await run(
      process.execPath,
      [
        path.join(ROOT, 'dist/scripts/agentctl/main.js'),
        'deploy',
        'promote',
        vN1.buildId,
        '--as',
        'release-bot',
      ],
      {
        cwd: ROOT,
        env: { ...process.env, ...temporal.appEnv('worker'), ...policy },
      },
    );
    const c = await temporalClient();
    await until(
      'every workflow to move onto N+1',
      async () => (await workflowsOffVersion(c, taskQueue, vN1)).length === 0,
      {
        timeoutMs: 90_000,
      },
    );
    for (const old of workersN) {
      apps.splice(apps.indexOf(old), 1);
      await old.kill('SIGTERM');
    }

    await approveAndSeeItRun(gateway, session, gate.id);
    expect(linesWritten([next], session, 'rolling.txt')).toBe(1);
    const after = sessionId('after-rolling');
    expect((await gateway.web.say(after, 'hello')).status).toBe(202);
    expect((await gateway.web.answered(after)).transcript.at(-1)?.role).toBe('assistant');
  });
});
