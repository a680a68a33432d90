/**
 * Message → answer for a session against the bare workflow (bare-workflow.ts) in the same run, both measured
 * the same way: signal, then read the answer with a query every 5 ms. The ratio is #20's goal 4 (≤ 1.5×). Also
 * the first message of a new conversation (signal-with-start of a new workflow each time), which pays the run's
 * opening reads as well.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import { TestSession } from '../../test/helpers/session';
import { bareAnswerQuery, bareMessageSignal } from './bare-workflow';

const QUEUE = 'bench-bare';

export async function measureFloor(options: {
  client: Client;
  connection: NativeConnection;
  sessionQueue: string;
  rounds: number;
  runSessionWorker: <T>(fn: () => Promise<T>) => Promise<T>;
}): Promise<{ bare: number[]; session: number[]; firstBare: number[]; firstSession: number[] }> {
  const worker = await Worker.create({
    connection: options.connection,
    taskQueue: QUEUE,
    workflowsPath: require.resolve('./bare-workflow'),
    activities: { echo: async (text: string) => await Promise.resolve(text) },
  });
  const bare: number[] = [];
  const firstBare: number[] = [];
  await worker.runUntil(async () => {
    const handle = await options.client.workflow.start('bareWorkflow', {
      workflowId: `bare-${randomUUID()}`,
      taskQueue: QUEUE,
    });
    for (let i = 0; i < options.rounds + 1; i++) {
      const text = `hello ${i}`;
      const start = performance.now();
      await handle.signal(bareMessageSignal, text);
      while ((await handle.query(bareAnswerQuery)) !== text) await new Promise((r) => setTimeout(r, 5));
      if (i > 0) bare.push(performance.now() - start); // the first pays the worker's warm-up
    }
    await handle.terminate('bench done');
    for (let i = 0; i < options.rounds; i++) {
      const start = performance.now();
      const first = await options.client.workflow.signalWithStart('bareWorkflow', {
        workflowId: `bare-first-${randomUUID()}`,
        taskQueue: QUEUE,
        signal: bareMessageSignal,
        signalArgs: ['hello'],
      });
      while ((await first.query(bareAnswerQuery)) !== 'hello') await new Promise((r) => setTimeout(r, 5));
      firstBare.push(performance.now() - start);
      await first.terminate('bench done');
    }
  });
  const session: number[] = [];
  const firstSession: number[] = [];
  await options.runSessionWorker(async () => {
    const s = new TestSession(options.client, options.sessionQueue);
    s.pollMs = 5;
    for (let i = 0; i < options.rounds + 1; i++) {
      const start = performance.now();
      await s.say(`hello ${i}`);
      await s.waitFor(
        (v) =>
          v.status === 'idle' &&
          v.transcript.at(-1)?.role === 'assistant' &&
          v.transcript.length === 2 * (i + 1),
        'answer',
      );
      if (i > 0) session.push(performance.now() - start);
    }
    for (let i = 0; i < options.rounds; i++) {
      const fresh = new TestSession(options.client, options.sessionQueue);
      fresh.pollMs = 5;
      const start = performance.now();
      await fresh.say('hello');
      await fresh.waitFor((v) => v.status === 'idle' && v.transcript.at(-1)?.role === 'assistant', 'answer');
      firstSession.push(performance.now() - start);
    }
  });
  return { bare, session, firstBare, firstSession };
}
