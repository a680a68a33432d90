/**
 * Parked workflows resolved against the floor (#20 goal 2): N sessions each waiting on a gate, then N bare
 * workflows each waiting on a signal, each kind served by a real worker process with the same bounded cache
 * (evicted ones replay when resolved). For each: worker RSS once all are parked, the time to park them and the
 * rate at which the bench resolves them all (a query, then a signal, as a gateway would). CPU time of the worker,
 * the dev server and the bench process while resolving says which of them was the bottleneck.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { decideSignal } from '../../workflows/session/contract';
import { ManagedProcess } from '../../test/helpers/processes';
import { TestSession } from '../../test/helpers/session';
import { bareMessageSignal } from './bare-workflow';
import { countersByOperation, perUnit } from './server-metrics';

/**
 * What parks: `bare` the floor; `fair` the fair floor (the same durable steps as a session's resume: a query, a
 * signal, one activity, one visibility write, still open after); `steps` (opt-in) a session's own durable steps on a resume
 * without its code (bare-workflow.ts); `session` a session waiting to approve a shell command (its resume runs the command
 * in the sandbox: ~10 ms of machine CPU in bwrap, setpriv, prlimit and sh that the floor's echo does not spend);
 * `session-question` a session waiting on an `ask_user` answer (its resume, like the floor's, starts no process).
 */
export type ParkedKind = 'bare' | 'fair' | 'steps' | 'session' | 'session-question';

export interface ParkedRun {
  kind: ParkedKind;
  parked: number;
  cachedWorkflows: number;
  rssMiB: number;
  peakRssMiB: number;
  parkSeconds: number;
  resolveSeconds: number;
  resumesPerSecond: number;
  /** When the bench had asked and signalled every one (the rest of resolveSeconds is the worker catching up). */
  signalledSeconds: number;
  /**
   * Share of one CPU each process used while resolving (100 = one core busy the whole time); `machine` is every
   * process together (the sandboxed commands and the shell launcher included), out of 100 per core.
   */
  cpuPercent: { worker: number; server: number; bench: number; machine: number };
  /** What each resume asked of the server: API calls and database operations (the largest kinds). */
  perResume?: {
    serviceRequests: ReturnType<typeof perUnit>;
    persistenceRequests: ReturnType<typeof perUnit>;
  };
}

/** A process's resident memory now and at its peak, from /proc (Linux). */
export function processMemory(pid: number): { rssMiB: number; peakRssMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rssMiB: Math.round(kib('VmRSS') / 1024), peakRssMiB: Math.round(kib('VmHWM') / 1024) };
}

/** CPU seconds a process has used so far (user + system), from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/** CPU seconds the whole machine has been busy (all cores, everything but idle and I/O wait), from /proc/stat. */
function machineBusySeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3]! + fields[4]!;
  return (fields.reduce((sum, n) => sum + n, 0) - idle) / 100;
}

/** The dev server's pid: the `temporal server start-dev` process listening on this port. */
export function devServerPid(port: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmdline.includes('start-dev') && cmdline.includes(String(port))) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** Runs `run` on every item, `size` at a time: a new one starts as soon as one ends (no batch waits for its slowest). */
async function inPool<T>(items: T[], size: number, run: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await run(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, lane));
}

/**
 * A query a loaded worker could not answer in time is asked again, as a gateway's user would click again: a
 * query given up silently would leave its workflow parked and the count never reached.
 */
async function retried<T>(ask: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ask();
    } catch (error) {
      if (attempt === attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

async function untilCount(client: Client, query: string, target: number, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; ;) {
    const { count } = await client.workflow.count(query);
    if (count === target) return;
    if (Date.now() > deadline)
      throw new Error(`${count} workflows match ${query}, not ${target}, after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Until the workflow's first workflow task has completed (started, scheduled, started, completed: 4 events). */
async function untilFirstTaskDone(handle: WorkflowHandle): Promise<void> {
  for (const deadline = Date.now() + 120_000; ;) {
    const { historyLength, raw } = await handle.describe();
    if (historyLength >= 4 && !raw.pendingWorkflowTask) return;
    if (Date.now() > deadline) throw new Error(`${handle.workflowId} never took its first workflow task`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** How one kind parks and is resolved: the visibility query that counts its parked workflows, and both steps. */
interface Kind {
  worker: { entry: string; env: Record<string, string> };
  parkedQuery: string;
  park(index: number): Promise<() => Promise<void>>;
}

export async function measureParked(options: {
  client: Client;
  address: string;
  counts: number[];
  cached: number;
  /** Which kinds to park, in this order (the floor first: the others are compared with it). */
  kinds?: ParkedKind[];
  /** The dev server's Prometheus endpoint, to count what each resume asked of it. */
  metricsUrl?: string;
  session: { queue: string; env: Record<string, string> };
  bare: { bundlePath: string };
}): Promise<ParkedRun[]> {
  const { client } = options;
  const serverPid = devServerPid(Number(options.address.split(':').at(-1)));
  const sessionKind =
    (parkedStatus: string, prompt: string, resolve: (s: TestSession, gateId: string) => Promise<void>) =>
    (): Kind => ({
      worker: { entry: 'workers/main.ts', env: options.session.env },
      parkedQuery: `AgentStatus = '${parkedStatus}' AND ExecutionStatus = 'Running'`,
      park: async () => {
        const s = new TestSession(client, options.session.queue);
        await s.say(prompt);
        return async () => {
          const gates = await retried(() => s.handle.query<{ id: string }[]>('pendingGates'));
          if (!gates.length) throw new Error(`${s.workflowId} has no open gate to resolve`);
          for (const gate of gates) await resolve(s, gate.id);
        };
      },
    });
  /**
   * A floor kind: its workflow in the bare worker on a queue of its own, queried and then signalled as a session is.
   * One that parks `visiblyWaiting` (its status `waiting_answer`) is counted parked by that; one that does not, once
   * its first workflow task is done (parked means waiting in the worker, as a session waiting on a gate is).
   */
  const floorKind =
    (name: string, workflowType: string, { visiblyWaiting }: { visiblyWaiting: boolean }) =>
    (): Kind => {
      const queue = `bench-${name}-parked-${randomUUID()}`;
      return {
        worker: {
          entry: 'bench/floor/bare-worker.ts',
          env: { TEMPORAL_TASK_QUEUE: queue, WORKFLOW_BUNDLE_PATH: options.bare.bundlePath },
        },
        parkedQuery: `WorkflowType = '${workflowType}'${visiblyWaiting ? " AND AgentStatus = 'waiting_answer'" : ''} AND ExecutionStatus = 'Running' AND TaskQueue = '${queue}'`,
        park: async () => {
          const handle: WorkflowHandle = await client.workflow.start(workflowType, {
            workflowId: `${name}-parked-${randomUUID()}`,
            taskQueue: queue,
          });
          if (!visiblyWaiting) await untilFirstTaskDone(handle);
          return async () => {
            await retried(() => handle.query('bareAnswer'));
            await handle.signal(bareMessageSignal, 'go');
          };
        },
      };
    };
  const kinds: Record<ParkedKind, () => Kind> = {
    session: sessionKind('waiting_approval', 'run `true`', (s, gateId) =>
      s.handle.signal(decideSignal, { gateId, choice: 'approve', userId: 'alice' }),
    ),
    'session-question': sessionKind('waiting_answer', 'ask one', (s, gateId) =>
      s.answer(gateId, [{ question: 'Environment', selected: ['staging'] }]),
    ),
    steps: floorKind('steps', 'stepsParkedWorkflow', { visiblyWaiting: true }),
    fair: floorKind('fair', 'fairParkedWorkflow', { visiblyWaiting: true }),
    // Visibility lists it Running from its start, before any worker has seen it.
    bare: floorKind('bare', 'bareParkedWorkflow', { visiblyWaiting: false }),
  };

  const runs: ParkedRun[] = [];
  for (const count of options.counts) {
    // Parking or resolving slower than 5 a second is a stuck run, not a slow one (10,000 sessions: 2,000 s).
    const deadlineMs = Math.max(600_000, count * 200);
    for (const kindName of options.kinds ?? (['bare', 'fair', 'session', 'session-question'] as const)) {
      const kind = kinds[kindName]();
      const worker = new ManagedProcess(`${kindName} worker`, kind.worker.entry, {
        ...kind.worker.env,
        TEMPORAL_ADDRESS: options.address,
        WORKER_MAX_CACHED_WORKFLOWS: String(options.cached),
        LOG_LEVEL: 'info',
      });
      await worker.start((output) => output.includes('"worker started"'));
      const baseline = (await client.workflow.count(kind.parkedQuery)).count;
      let start = performance.now();
      const resolvers: (() => Promise<void>)[] = [];
      await inPool(
        Array.from({ length: count }, (_, i) => i),
        50,
        async (i) => resolvers.push(await kind.park(i)),
      );
      await untilCount(client, kind.parkedQuery, baseline + count, deadlineMs);
      const parkSeconds = (performance.now() - start) / 1000;
      const memory = processMemory(worker.pid!);
      const cpuBefore = {
        worker: cpuSeconds(worker.pid!),
        server: serverPid ? cpuSeconds(serverPid) : 0,
        bench: process.cpuUsage(),
        machine: machineBusySeconds(),
      };
      const counters = async () =>
        options.metricsUrl
          ? await Promise.all([
              countersByOperation(options.metricsUrl, 'service_requests'),
              countersByOperation(options.metricsUrl, 'persistence_requests'),
            ])
          : undefined;
      const countersBefore = await counters();
      start = performance.now();
      await inPool(resolvers, 50, (resolve) => resolve());
      const signalledSeconds = (performance.now() - start) / 1000;
      await untilCount(client, kind.parkedQuery, baseline, deadlineMs);
      const resolveSeconds = (performance.now() - start) / 1000;
      const countersAfter = await counters();
      const benchCpu = process.cpuUsage(cpuBefore.bench);
      const percent = (seconds: number) => Math.round((100 * seconds) / resolveSeconds);
      const peak = processMemory(worker.pid!).peakRssMiB;
      runs.push({
        kind: kindName,
        parked: count,
        cachedWorkflows: options.cached,
        rssMiB: memory.rssMiB,
        peakRssMiB: peak,
        parkSeconds: Number(parkSeconds.toFixed(1)),
        resolveSeconds: Number(resolveSeconds.toFixed(1)),
        resumesPerSecond: Number((count / resolveSeconds).toFixed(1)),
        signalledSeconds: Number(signalledSeconds.toFixed(1)),
        cpuPercent: {
          worker: percent(cpuSeconds(worker.pid!) - cpuBefore.worker),
          server: serverPid ? percent(cpuSeconds(serverPid) - cpuBefore.server) : 0,
          bench: percent((benchCpu.user + benchCpu.system) / 1e6),
          machine: percent(machineBusySeconds() - cpuBefore.machine),
        },
        ...(countersBefore && countersAfter
          ? {
              perResume: {
                serviceRequests: perUnit(countersBefore[0], countersAfter[0], count),
                persistenceRequests: perUnit(countersBefore[1], countersAfter[1], count),
              },
            }
          : {}),
      });
      await worker.kill('SIGTERM');
    }
  }
  return runs;
}
