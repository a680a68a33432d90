/**
 * Two figures of #20, measured with real processes against the bench's dev server:
 *
 * - Recovery after a crash: a worker process with a session waiting on an approval is SIGKILLed, the click is
 *   made while no worker runs, a new worker process starts. Measured: start → "worker started" (the bundle is
 *   reused from DATA_DIR), and "worker started" → the tool has run and the session is idle (read with
 *   `describe()`, which needs no worker), for the short sticky timeout we ship and the SDK's default.
 * - Live web views: N tabs (SSE streams through the gateway) on N idle sessions; the Temporal server's query
 *   counter and this process's CPU (worker and gateway run here) over a quiet spell.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { AgentStatus } from '../common/search-attributes';
import { cachedWorkflowBundle } from '../workers/workflow-code';
import { pendingGatesQuery } from '../workflows/session/contract';
import { ManagedProcess } from '../test/helpers/processes';
import { countersByOperation } from './floor/server-metrics';
import { TestSession } from '../test/helpers/session';
import { SseTab } from '../test/helpers/sse';
import type { Stat } from './stat';

const ready = (output: string) => output.includes('"worker started"');

async function statusIs(session: TestSession, status: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const described = await session.handle.describe().catch(() => undefined);
    if (described?.typedSearchAttributes.get(AgentStatus) === status) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`session did not reach ${status}`);
}

export async function measureRecovery(options: {
  client: Client;
  address: string;
  dataDir: string;
  policyFile: string;
  runs: number;
  stat: (samples: number[]) => Stat;
}): Promise<Record<string, { startMs: Stat; clickAfterPollMs: Stat }> & { bundleBuildMs: number }> {
  const started = performance.now();
  await cachedWorkflowBundle(path.join(options.dataDir, 'workflow-bundles'), () => {});
  const bundleBuildMs = Math.round(performance.now() - started);
  const out: Record<string, { startMs: Stat; clickAfterPollMs: Stat }> = {};
  // The compiled worker, as the Docker image runs it (`npm run build`, then node dist/workers/main.js).
  await promisify(execFile)('npm', ['run', 'build'], { cwd: path.resolve(__dirname, '..') });
  for (const [sticky, entry] of [
    ['1s', 'workers/main.ts'],
    ['10s', 'workers/main.ts'],
    ['1s compiled', 'dist/workers/main.js'],
  ] as const) {
    const queue = `recovery-${sticky.replace(' ', '-')}`;
    const worker = () =>
      new ManagedProcess('worker', entry, {
        DATA_DIR: options.dataDir,
        AGENT_CONFIG: options.policyFile,
        TEMPORAL_ADDRESS: options.address,
        TEMPORAL_TASK_QUEUE: queue,
        WORKER_STICKY_TIMEOUT: sticky.split(' ')[0]!,
        LOG_LEVEL: 'info',
      });
    const startMs: number[] = [];
    const clickAfterPollMs: number[] = [];
    // Compiled code has a workflow bundle of its own (built from dist/): built by a first start, not measured.
    if (entry.endsWith('.js')) {
      const warm = worker();
      await warm.start(ready);
      await warm.kill('SIGTERM');
    }
    for (let i = 0; i < options.runs; i++) {
      const first = worker();
      await first.start(ready);
      const session = new TestSession(options.client, queue);
      await session.say('run `true`');
      await statusIs(session, 'waiting_approval');
      const [gate] = await session.handle.query(pendingGatesQuery);
      await first.kill('SIGKILL');
      await session.decide({ gateId: gate!.id, choice: 'approve' });
      const second = worker();
      const t0 = performance.now();
      await second.start(ready);
      const polling = performance.now();
      startMs.push(polling - t0);
      await statusIs(session, 'idle');
      clickAfterPollMs.push(performance.now() - polling);
      await second.kill('SIGTERM');
    }
    out[`sticky ${sticky}`] = {
      startMs: options.stat(startMs),
      clickAfterPollMs: options.stat(clickAfterPollMs),
    };
  }
  return { ...out, bundleBuildMs } as never;
}

export async function measureIdleTabs(options: {
  client: Client;
  queue: string;
  gatewayUrl: string;
  metricsUrl: string;
  tabs: number;
  quietSeconds: number;
}): Promise<{ tabs: number; queriesPerSecond: number; cpuPercent: number }> {
  const sessions = Array.from({ length: options.tabs }, () => new TestSession(options.client, options.queue));
  for (let i = 0; i < sessions.length; i += 50)
    await Promise.all(sessions.slice(i, i + 50).map((s, j) => s.say('hello', `person${i + j}`)));
  for (const s of sessions) await statusIs(s, 'idle');
  const tabs = await Promise.all(
    // One person per session: a person may keep at most 12 live views open.
    sessions.map((s, i) =>
      new SseTab(`${options.gatewayUrl}/api/sessions/${s.sessionId}/stream`, {
        'x-forwarded-user': `person${i}`,
      }).open(),
    ),
  );
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !tabs.every((t) => t.views().length > 0))
    await new Promise((resolve) => setTimeout(resolve, 50));
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const queries = async () =>
    (await countersByOperation(options.metricsUrl, 'service_requests')).get('QueryWorkflow') ?? 0;
  const q0 = await queries();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, options.quietSeconds * 1000));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const q1 = await queries();
  await Promise.all(tabs.map((t) => t.close()));
  return {
    tabs: options.tabs,
    queriesPerSecond: Number(((q1 - q0) / seconds).toFixed(1)),
    cpuPercent: Number((((cpu.user + cpu.system) / 1e6 / seconds) * 100).toFixed(1)),
  };
}
