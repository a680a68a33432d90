/**
 * `npm run soak`: mixed traffic for SOAK_MINUTES (60 unless set) on the production shape (test/helpers/real-temporal.ts:
 * the Temporal server docker-compose.yml pins, built from source, on PostgreSQL with mTLS; the compiled worker and
 * gateway with compose's environment), while the worker, the gateway and the whole server are SIGKILLed at random
 * (every SOAK_KILL_EVERY seconds on average, 45 unless set) and started again.
 *
 * SOAK_PEOPLE people (4 unless set) each loop over five flows: a message (answered), an approval (clicked, its
 * command written exactly once), a question (answered by a typed "1", resolved), a sign-in (disconnected first, then
 * asked for, completed through a real OAuth provider as a browser does, the waiting read run with the token) and a
 * mission (created from the conversation, fired, its run's answer posted back). A request that fails while a part is
 * down is sent again with the same message id, as the page does; anything the gateway accepted must come through.
 * "Lost" counts what did not: an accepted message never answered, an approval that did not run or ran twice, a
 * question never resolved. Prints the figures, writes bench/results/soak-<time>.json, exits 1 when anything was lost.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { tempDir, testEnv } from '../test/helpers/config';
import { Browser, CLIENT_ID, CLIENT_SECRET, TestOAuthProvider } from '../test/helpers/oauth-provider';
import { startPostgres } from '../test/helpers/postgres';
import { freePort, ManagedProcess, workerReady } from '../test/helpers/processes';
import { RealTemporal } from '../test/helpers/real-temporal';
import type { SessionView } from '../workflows/session/contract';
import { sessionWorkdir } from '../activities/tools/shell';
import { stat } from './stat';

const ROOT = path.resolve(__dirname, '..');
const run = promisify(execFile);
const MINUTES = Number(process.env.SOAK_MINUTES ?? 60);
const KILL_EVERY_S = Number(process.env.SOAK_KILL_EVERY ?? 45);
const PEOPLE = Number(process.env.SOAK_PEOPLE ?? 4);
/** How long a flow may take across outages before it counts as lost. */
const FLOW_TIMEOUT_MS = Number(process.env.SOAK_FLOW_TIMEOUT_S ?? 300) * 1000;

type Flow = 'message' | 'approval' | 'question' | 'signIn' | 'mission';
const FLOWS: Flow[] = ['message', 'approval', 'question', 'signIn', 'mission'];
interface Tally {
  started: number;
  done: number;
  lost: number;
  ms: number[];
  examples: string[];
}
const tallies: Record<Flow, Tally> = {
  message: { started: 0, done: 0, lost: 0, ms: [], examples: [] },
  approval: { started: 0, done: 0, lost: 0, ms: [], examples: [] },
  question: { started: 0, done: 0, lost: 0, ms: [], examples: [] },
  signIn: { started: 0, done: 0, lost: 0, ms: [], examples: [] },
  mission: { started: 0, done: 0, lost: 0, ms: [], examples: [] },
};
const kills: Record<'worker' | 'gateway' | 'server', number> = { worker: 0, gateway: 0, server: 0 };
let retriedRequests = 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  process.stdout.write(`soak: ${MINUTES} min, ${PEOPLE} people, a kill every ~${KILL_EVERY_S} s\n`);
  await run('npm', ['run', 'build'], { cwd: ROOT });
  const bundle = path.join(tempDir('soak-bundle-'), 'workflow-bundle.js');
  await run(process.execPath, ['dist/scripts/bundle-workflows.js', bundle, 'workflows'], { cwd: ROOT });
  const postgres = await startPostgres();
  const provider = await new TestOAuthProvider().start();
  const temporal = await RealTemporal.create(postgres);
  await temporal.setupSchema();
  temporal.start();
  await temporal.createNamespace();
  // The worker says "worker started" at info, which is how a restart is known to be ready.
  const policy = testEnv(provider.acmePolicy(), {
    LOG_LEVEL: 'info',
    NODE_ENV: 'production',
    // The vault both processes share, as compose runs it: the gateway stores a token, the worker uses it.
    DATABASE_URL: await postgres.createDatabase(),
    VAULT_KEY: randomBytes(32).toString('base64'),
    OAUTH_ACME_CLIENT_ID: CLIENT_ID,
    OAUTH_ACME_CLIENT_SECRET: CLIENT_SECRET,
  });
  const workerData = tempDir('soak-worker-');
  const worker = new ManagedProcess('worker', 'dist/workers/main.js', {
    ...temporal.appEnv('worker'),
    ...policy,
    DATA_DIR: workerData,
    WORKFLOW_BUNDLE_PATH: bundle,
  });
  const port = await freePort();
  const gatewayEnv: Record<string, string> = {
    ...temporal.appEnv('gateway'),
    ...policy,
    DATA_DIR: tempDir('soak-gateway-'),
    HOST: '127.0.0.1',
    PORT: String(port),
    WEB_TRUSTED_USER_HEADER: 'x-forwarded-user',
    WEB_TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
    WEB_RATE_MESSAGES: '100000',
    WEB_RATE_SESSIONS: '100000',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
  };
  delete gatewayEnv.TEMPORAL_UI_UPSTREAM;
  const gateway = new ManagedProcess('gateway', 'dist/gateways/main.js', gatewayEnv);
  const gatewayUp = async () =>
    (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true;
  await worker.start(workerReady, 120_000);
  await gateway.start(gatewayUp, 120_000);

  const base = `http://127.0.0.1:${port}/api`;
  const api = async (method: string, route: string, user: string, body?: unknown) => {
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-forwarded-user': user },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: response.status, body: (await response.json().catch(() => undefined)) as unknown };
  };
  /** Sent until the gateway accepts it (the same message id each time, as the page sends again). */
  const accepted = async (method: string, route: string, user: string, body: unknown, deadline: number) => {
    for (;;) {
      const answer = await api(method, route, user, body).catch(() => undefined);
      if (answer && answer.status >= 200 && answer.status < 300) return;
      if (answer && answer.status >= 400 && answer.status < 500 && answer.status !== 429)
        throw new Error(`${route} refused: ${answer.status} ${JSON.stringify(answer.body)}`);
      if (Date.now() > deadline) throw new Error(`${route} never accepted`);
      retriedRequests++;
      await sleep(500);
    }
  };
  /** A person's message into a conversation, sent until the gateway takes it (a new id per message). */
  const say = (session: string, user: string, text: string, deadline: number) =>
    accepted('POST', `/sessions/${session}/messages`, user, { text, messageId: randomUUID() }, deadline);
  const viewUntil = async (
    session: string,
    user: string,
    ok: (view: SessionView) => boolean,
    deadline: number,
  ): Promise<SessionView> => {
    for (;;) {
      const answer = await api('GET', `/sessions/${session}`, user).catch(() => undefined);
      if (answer?.status === 200 && ok(answer.body as SessionView)) return answer.body as SessionView;
      if (Date.now() > deadline) {
        const last = answer?.body as SessionView | undefined;
        throw new Error(
          `never (status ${answer?.status}): ${JSON.stringify({ status: last?.status, gates: last?.gates, last: last?.transcript?.at(-1) })?.slice(0, 600)}`,
        );
      }
      await sleep(300);
    }
  };
  const linesIn = (session: string, file: string) => {
    const full = path.join(sessionWorkdir(workerData, `session:web:${session}`), file);
    return existsSync(full) ? readFileSync(full, 'utf8').split('\n').filter(Boolean).length : 0;
  };

  const flows: Record<Flow, (user: string, n: number) => Promise<void>> = {
    async message(user, n) {
      const session = `soak-${user}-m${n}`;
      const deadline = Date.now() + FLOW_TIMEOUT_MS;
      await say(session, user, `hello ${n}`, deadline);
      await viewUntil(
        session,
        user,
        (v) =>
          v.status === 'idle' &&
          v.transcript.some((m) => m.role === 'assistant' && m.text.includes(`hello ${n}`)),
        deadline,
      );
    },
    async approval(user, n) {
      const session = `soak-${user}-a${n}`;
      const deadline = Date.now() + FLOW_TIMEOUT_MS;
      await say(session, user, `run \`echo once >> a${n}.txt\``, deadline);
      const waiting = await viewUntil(
        session,
        user,
        (v) => v.gates.some((g) => g.status === 'pending'),
        deadline,
      );
      const gate = waiting.gates.find((g) => g.status === 'pending')!;
      await accepted(
        'POST',
        '/decisions',
        user,
        { workflowId: `session:web:${session}`, gateId: gate.id, choice: 'approve' },
        deadline,
      );
      await viewUntil(
        session,
        user,
        (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'tool'),
        deadline,
      );
      const lines = linesIn(session, `a${n}.txt`);
      const result = (await viewUntil(session, user, () => true, deadline)).transcript.find(
        (m) => m.role === 'tool',
      );
      // Interrupted by a kill while it ran: reported as such, never repeated. Otherwise exactly once.
      if (lines > 1 || (result?.role === 'tool' && result.status === 'ok' && lines !== 1))
        throw new Error(`ran ${lines} times (result ${result?.role === 'tool' ? result.status : '?'})`);
    },
    async question(user, n) {
      const session = `soak-${user}-q${n}`;
      const deadline = Date.now() + FLOW_TIMEOUT_MS;
      await say(session, user, 'ask one', deadline);
      await viewUntil(
        session,
        user,
        (v) => v.gates.some((g) => g.kind === 'question' && g.status === 'pending'),
        deadline,
      );
      await say(session, user, '1', deadline);
      await viewUntil(
        session,
        user,
        (v) => v.status === 'idle' && v.gates.some((g) => g.kind === 'question' && g.status === 'resolved'),
        deadline,
      );
    },
    async signIn(user, n) {
      const session = `soak-${user}-s${n}`;
      const deadline = Date.now() + FLOW_TIMEOUT_MS;
      // Each round starts signed out, so each one asks and signs in again.
      await accepted('DELETE', '/credentials/acme', user, undefined, deadline);
      await say(session, user, `fetch ${provider.apiUrl}/files with acme`, deadline);
      const asking = (v: SessionView) =>
        v.gates.find((g) => g.kind === 'credential' && g.status === 'pending');
      // A sign-in cut by a kill is started again from the link the page shows, as a person would.
      for (;;) {
        const view = await viewUntil(
          session,
          user,
          (v) =>
            asking(v) !== undefined || (v.status === 'idle' && v.transcript.some((m) => m.role === 'tool')),
          deadline,
        );
        const gate = asking(view) as { connectUrl?: string } | undefined;
        if (!gate) break;
        const result = await new Browser({ 'x-forwarded-user': user })
          .signIn(gate.connectUrl!)
          .catch((error: unknown) => ({ status: 0, text: String(error) }));
        if (result.status === 200) break;
        if (Date.now() > deadline) throw new Error(`sign-in never completed: ${result.text.slice(0, 200)}`);
        retriedRequests++;
        await sleep(500);
      }
      const done = await viewUntil(
        session,
        user,
        (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'tool'),
        deadline,
      );
      const result = done.transcript.find((m) => m.role === 'tool');
      if (result?.role !== 'tool' || !result.content.includes('hello johndoe'))
        throw new Error(`the read did not run with the token: ${JSON.stringify(result).slice(0, 200)}`);
    },
    async mission(user, n) {
      const session = `soak-${user}-r${n}`;
      const name = `soak-${n}`;
      const deadline = Date.now() + FLOW_TIMEOUT_MS;
      await accepted(
        'POST',
        `/sessions/${session}/messages`,
        user,
        {
          text: `call mission_create {"name": "${name}", "goal": "hello from mission ${n}", "cadence": "manual"}`,
          messageId: randomUUID(),
        },
        deadline,
      );
      await viewUntil(
        session,
        user,
        (v) => v.status === 'idle' && v.transcript.some((m) => m.role === 'tool'),
        deadline,
      );
      await say(session, user, `call mission_fire "${name}"`, deadline);
      await viewUntil(
        session,
        user,
        (v) => v.transcript.some((m) => m.role === 'assistant' && m.text.startsWith(`**${name}** (run 1)`)),
        deadline,
      );
    },
  };

  const end = Date.now() + MINUTES * 60_000;
  const person = async (user: string) => {
    for (let n = 0; Date.now() < end; n++) {
      const flow = FLOWS[n % FLOWS.length]!;
      const tally = tallies[flow];
      tally.started++;
      const started = Date.now();
      try {
        await flows[flow](user, n);
        tally.done++;
        tally.ms.push(Date.now() - started);
      } catch (error) {
        tally.lost++;
        if (tally.examples.length < 5)
          tally.examples.push(`${user} ${flow} ${n}: ${(error as Error).message}`);
      }
    }
  };
  const chaos = async () => {
    while (Date.now() < end - 30_000) {
      const pause = KILL_EVERY_S * 1000 * (0.5 + Math.random());
      // Never past the end: a pause longer than what is left (SOAK_KILL_EVERY=100000: a soak without kills) ends it.
      if (Date.now() + pause > end - 30_000) break;
      await sleep(pause);
      const part = (['worker', 'gateway', 'server'] as const)[Math.floor(Math.random() * 3)]!;
      kills[part]++;
      process.stdout.write(`  ${new Date().toISOString().slice(11, 19)} SIGKILL ${part}\n`);
      if (part === 'worker') {
        await worker.kill('SIGKILL');
        await sleep(1_000 + Math.random() * 4_000);
        await worker.start(workerReady, 120_000);
      } else if (part === 'gateway') {
        await gateway.kill('SIGKILL');
        await sleep(1_000 + Math.random() * 4_000);
        await gateway.start(gatewayUp, 120_000);
      } else {
        await temporal.kill();
        await sleep(1_000 + Math.random() * 4_000);
        temporal.start();
      }
    }
  };
  const started = Date.now();
  await Promise.all([chaos(), ...Array.from({ length: PEOPLE }, (_, i) => person(`soaker${i}`))]);
  const seconds = Math.round((Date.now() - started) / 1000);

  const rows = (Object.keys(tallies) as Flow[]).map((flow) => {
    const t = tallies[flow];
    const figures = stat(t.ms);
    return {
      flow,
      started: t.started,
      done: t.done,
      lost: t.lost,
      p50Ms: figures.p50,
      p99Ms: figures.p99,
      examples: t.examples,
    };
  });
  const lost = rows.reduce((sum, r) => sum + r.lost, 0);
  process.stdout.write(
    `\nsoak: ${seconds} s, kills ${JSON.stringify(kills)}, requests sent again ${retriedRequests}\n`,
  );
  for (const r of rows)
    process.stdout.write(
      `  ${r.flow.padEnd(9)} ${String(r.done).padStart(5)} of ${String(r.started).padStart(5)} done, ${r.lost} lost, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms\n`,
    );
  for (const r of rows) for (const example of r.examples) process.stdout.write(`    ${example}\n`);
  const results = path.join(ROOT, 'bench/results');
  mkdirSync(results, { recursive: true });
  const file = path.join(results, `soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ minutes: MINUTES, people: PEOPLE, seconds, kills, retriedRequests, rows }, null, 2)}\n`,
  );
  process.stdout.write(`  written to ${path.relative(ROOT, file)}\n`);
  // SOAK_DEBUG=1: what the worker and the gateway said, beside the figures, when something was lost.
  if (lost && process.env.SOAK_DEBUG) {
    writeFileSync(`${file}.worker.log`, worker.output);
    writeFileSync(`${file}.gateway.log`, gateway.output);
  }

  await Promise.all([worker.kill('SIGKILL'), gateway.kill('SIGKILL')]);
  await temporal.stopAll();
  await provider.stop();
  await postgres.stop();
  process.exit(lost ? 1 : 0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(2);
});
