/**
 * Memory per cached workflow, measured in a process of its own (started by memory.ts with --expose-gc): a real
 * worker (the SDK's default shared V8 context) runs a workflow bundle with a cache large enough for every
 * workflow, one warm-up workflow parks, the heap is measured after a full GC, COUNT more park, and it is measured
 * again. The difference over COUNT is what one more cached workflow costs: in V8 heap after a full collection (the
 * precise figure) and in resident memory (what the machine sees, including the heap's spare room).
 *
 * Env: TEMPORAL_ADDRESS, PROBE_BUNDLE (a workflow bundle file), PROBE_KIND (bare: park on a signal, as the floor
 * does; session: a session parked on an approval gate, as the parked-sessions bench does), PROBE_COUNT, and
 * optionally PROBE_SNAPSHOTS (a directory: heap snapshots before and after, for bench/floor/heap-diff.ts) and
 * PROBE_COMPACTED=1 (measure after a memory-reducing collection, see below).
 * Prints one JSON line: { kind, count, heapKiB, rssKiB } (per cached workflow).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { loadConfig } from '../../infra/config';
import { TEST_GATEWAY_KEY } from '../../test/helpers/config';
import { TestSession } from '../../test/helpers/session';

const QUEUE = `memory-probe-${randomUUID()}`;
const address = process.env.TEMPORAL_ADDRESS!;
const bundle = process.env.PROBE_BUNDLE!;
const kind = process.env.PROBE_KIND as 'bare' | 'session';
const count = Number(process.env.PROBE_COUNT ?? 200);
/** A directory to write heap snapshots into (base and after), to see what a cached workflow holds. */
const snapshots = process.env.PROBE_SNAPSHOTS;

/**
 * Measure after a memory-reducing collection (V8 compacts its heap, returns its free pages and drops compiled
 * code it can rebuild; it runs one by itself when a process goes quiet). Right after parking, most of the resident
 * growth is free heap pages the parking's garbage left committed, not what the parked workflows hold.
 */
const compacted = process.env.PROBE_COMPACTED === '1';

const gc = (globalThis as { gc?: (options?: object) => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

/** The V8 heap in use after a full collection, and the process's resident memory, in MiB. */
async function memory(): Promise<{ heap: number; rss: number }> {
  // Twice, with a turn in between: weak references and finalizers let go on the second pass.
  gc!();
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc!();
  if (compacted) gc!({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  const { heapUsed, rss } = process.memoryUsage();
  return { heap: heapUsed / 2 ** 20, rss: rss / 2 ** 20 };
}

async function main(): Promise<void> {
  const connection = await NativeConnection.connect({ address });
  const client = new Client({ connection: await Connection.connect({ address }) });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'memory-probe-'));
  const policyFile = path.join(dataDir, 'agent.config.json');
  writeFileSync(policyFile, '{}');
  const config = loadConfig({
    DATA_DIR: dataDir,
    AGENT_CONFIG: policyFile,
    LOG_LEVEL: 'error',
    GATEWAY_KEY: TEST_GATEWAY_KEY,
  });
  const worker = await Worker.create({
    connection,
    taskQueue: QUEUE,
    workflowBundle: { codePath: bundle },
    activities:
      kind === 'bare'
        ? { echo: async (text: string) => await Promise.resolve(text) }
        : createActivities({ config, client }),
    maxCachedWorkflows: count + 20,
    // Workflows run on this thread (not the worker thread they get in production), so gc() and the heap figures
    // see them; the V8 context and module instances are the same either way.
    debugMode: true,
  });

  /** Starts one workflow and resolves once it is parked (waiting, nothing left to run). */
  const park = async (): Promise<void> => {
    if (kind === 'bare') {
      const handle = await client.workflow.start('bareWorkflow', {
        workflowId: `probe-${randomUUID()}`,
        taskQueue: QUEUE,
      });
      await handle.signal('bareMessage', 'hello');
      while ((await handle.query<string | undefined>('bareAnswer')) !== 'hello')
        await new Promise((resolve) => setTimeout(resolve, 20));
      return;
    }
    const session = new TestSession(client, QUEUE);
    session.pollMs = 20;
    await session.say('run `true`');
    await session.pendingGate();
  };

  await worker.runUntil(async () => {
    await park();
    // Snapshots are written before measuring: writing one leaves garbage of its own behind.
    if (snapshots)
      v8.writeHeapSnapshot(path.join(snapshots, `${path.basename(bundle, '.js')}-base.heapsnapshot`));
    const base = await memory();
    for (let i = 0; i < count; i += 20)
      await Promise.all(Array.from({ length: Math.min(20, count - i) }, park));
    const after = await memory();
    if (snapshots)
      v8.writeHeapSnapshot(path.join(snapshots, `${path.basename(bundle, '.js')}-after.heapsnapshot`));
    const cached = worker.getStatus().numCachedWorkflows;
    if (cached !== count + 1)
      throw new Error(`expected ${count + 1} cached workflows, the worker has ${cached}`);
    process.stdout.write(
      `${JSON.stringify({
        kind,
        count,
        heapKiB: Math.round(((after.heap - base.heap) * 1024) / count),
        rssKiB: Math.round(((after.rss - base.rss) * 1024) / count),
      })}\n`,
    );
  });
  await connection.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack}\n`);
    process.exit(1);
  },
);
