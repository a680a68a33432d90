/**
 * The `drain` section: a deploy with PARKED conversations waiting on an approval, as an operator runs it. A real
 * worker process of version N parks them; a worker process of N+1 (a changed command sequence) starts and N+1 is
 * made current; the drain moves them at the server's pace (`worker.batcherRPS`, what WORKER_DRAIN_RATE sets) while
 * people keep clicking parked gates and starting new conversations. What it reports: time to drain, the rate, and
 * click → effect and message → answer latency during the drain (goal: a click's effect within 1 s at p99).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setCurrentVersion } from '../infra/temporal/deployment';
import { countOnVersion } from '../infra/temporal/drain-batch';
import { bundleWorkflows } from '../workers/workflow-code';
import { deployWorkerEnv, nextVersionBundle, versionPair } from '../test/helpers/next-version';
import { workerProcess, workerReady, type ManagedProcess } from '../test/helpers/processes';
import { TestSession } from '../test/helpers/session';
import { startTestTemporal } from '../test/helpers/temporal';
import type { Stat } from './stat';

export interface DrainFigures {
  parked: number;
  rate: number;
  parkSeconds: number;
  drainSeconds: number;
  movedPerSecond: number;
  clickToEffect: Stat;
  messageToAnswer: Stat;
  /** The same, once the drain is done: what the drain adds. */
  clickAfter: Stat;
  messageAfter: Stat;
  /** Samples that did not complete within 10 minutes. */
  samplesFailed: number;
}

export async function measureDrain(options: {
  parked: number;
  rate: number;
  stat: (samples: number[]) => Stat;
  note: (text: string) => void;
}): Promise<DrainFigures> {
  const { parked, rate, stat, note } = options;
  const env = await startTestTemporal({ drainRate: rate });
  const workers: ManagedProcess[] = [];
  try {
    const taskQueue = `bench-drain-${Date.now()}`;
    const bundleN = path.join(mkdtempSync(path.join(os.tmpdir(), 'bench-drain-')), 'workflows.js');
    writeFileSync(bundleN, await bundleWorkflows());
    const bundleN1 = await nextVersionBundle();
    const [vN, vN1] = versionPair(taskQueue, bundleN, bundleN1);
    const base = deployWorkerEnv(env.address, taskQueue, {
      WORKER_DRAIN_INTERVAL: '5s',
      WORKER_DRAIN_RATE: String(rate),
    });
    const start = async (bundle: string, promote: 'auto' | 'manual') => {
      const worker = workerProcess({
        ...base,
        WORKFLOW_BUNDLE_PATH: bundle,
        TEMPORAL_DEPLOY_PROMOTE: promote,
      });
      workers.push(worker);
      await worker.start(workerReady);
    };
    await start(bundleN, 'auto');

    const park0 = performance.now();
    const sessions: TestSession[] = [];
    for (let i = 0; i < parked; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, parked - i) }, async () => {
          const session = new TestSession(env.client, taskQueue);
          sessions.push(session);
          await session.say('run `echo parked`');
        }),
      );
    while ((await countOnVersion(env.client, 'default', taskQueue, vN)) < parked)
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    const waiting = `TaskQueue = '${taskQueue}' AND AgentStatus = 'waiting_approval'`;
    while ((await env.client.workflow.count(waiting)).count < parked)
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    const parkSeconds = Number(((performance.now() - park0) / 1000).toFixed(0));
    note(`${`drain: ${parked} parked on version N`.padEnd(52)} in ${parkSeconds} s`);

    await start(bundleN1, 'manual');
    const drain0 = performance.now();
    await setCurrentVersion(env.client, 'default', vN1, 'bench');
    let draining = true;
    let picked = 0;
    /**
     * A person clicks a parked gate, another starts a conversation, in turn, while `going()` holds. A sample that does
     * not complete within 10 minutes (or whose conversation could not even be read) is counted, not measured.
     */
    const people = async (going: () => boolean) => {
      const clicks: number[] = [];
      const messages: number[] = [];
      let failed = 0;
      for (; going() && picked < sessions.length; picked++) {
        const session = sessions[(picked * 7919) % sessions.length]!;
        session.pollMs = 20;
        try {
          const view = await session.waitFor(
            (v) => v.gates.some((g) => g.status === 'pending'),
            'its parked gate',
            600_000,
          );
          const gate = view.gates.find((g) => g.status === 'pending')!;
          const t0 = performance.now();
          await session.decide({ gateId: gate.id, choice: 'approve' });
          await session.waitFor(
            (v) => v.transcript.some((m) => m.role === 'tool' && m.status === 'ok'),
            'the approved command',
            600_000,
          );
          clicks.push(performance.now() - t0);
          const fresh = new TestSession(env.client, taskQueue);
          fresh.pollMs = 20;
          const t1 = performance.now();
          await fresh.say('hello');
          // However long it takes is the figure: a drain that starves new conversations shows here.
          await fresh.waitFor(
            (v) => v.status === 'idle' && v.queued === 0 && v.transcript.at(-1)?.role === 'assistant',
            'the answer to a new conversation',
            600_000,
          );
          messages.push(performance.now() - t1);
        } catch (error) {
          failed++;
          note(`drain: a sample did not complete: ${(error as Error).message.split('\n')[0]}`);
        }
      }
      return { clicks, messages, failed };
    };
    const during = people(() => draining);
    while ((await countOnVersion(env.client, 'default', taskQueue, vN)) > 0)
      await new Promise((resolve) => setTimeout(resolve, 500));
    const drainSeconds = (performance.now() - drain0) / 1000;
    draining = false;
    const { clicks, messages, failed } = await during;
    const calm = picked + 20;
    const after = await people(() => picked < calm);
    return {
      parked,
      rate,
      parkSeconds,
      drainSeconds: Number(drainSeconds.toFixed(0)),
      movedPerSecond: Number((parked / drainSeconds).toFixed(1)),
      clickToEffect: stat(clicks),
      messageToAnswer: stat(messages),
      clickAfter: stat(after.clicks),
      messageAfter: stat(after.messages),
      samplesFailed: failed + after.failed,
    };
  } finally {
    await Promise.all(workers.map((worker) => worker.kill('SIGTERM')));
    await env.teardown();
  }
}
