/**
 * `npm run bench`: figures for the paths people feel, against a real local Temporal dev server and a real
 * worker with the scripted model (so the numbers are the runtime's, not a model's). Prints; never fails on time.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { ToolRunLedger } from '../activities/tools/ledger';
import { loadConfig } from '../common/config';
import { TestSession } from '../test/helpers/session';
import { startTestTemporal } from '../test/helpers/temporal';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);

function summary(label: string, samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
  return `${label.padEnd(44)} n=${String(samples.length).padStart(3)}  median ${at(0.5).padStart(7)} ms  p95 ${at(0.95).padStart(7)} ms`;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agent-bench-'));
  const policyFile = path.join(dataDir, 'agent.config.json');
  writeFileSync(policyFile, '{}');
  const config = loadConfig({ DATA_DIR: dataDir, AGENT_CONFIG: policyFile, TEMPORAL_TASK_QUEUE: 'bench' });
  const env = await startTestTemporal();
  const ledger = new ToolRunLedger(dataDir);
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'bench',
    workflowsPath: require.resolve('../workflows'),
    activities: createActivities({ config, client: env.client, ledger }),
  });
  const lines: string[] = [];
  let long: TestSession | undefined;
  await worker.runUntil(async () => {
    const plain: number[] = [];
    const auto: number[] = [];
    const approval: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const session = new TestSession(env.client, 'bench');
      session.pollMs = 10;
      let start = performance.now();
      await session.say(`hello ${i}`);
      await session.idle();
      plain.push(performance.now() - start);

      start = performance.now();
      await session.say('what time is it');
      await session.waitFor(
        (v) =>
          v.status === 'idle' &&
          v.transcript.filter((m) => m.role === 'tool').length === 1 &&
          v.transcript.at(-1)?.role === 'assistant',
        'auto tool',
      );
      auto.push(performance.now() - start);

      await session.say('run `true`');
      const [gate] = await session.pendingGate();
      start = performance.now();
      await session.decide({ gateId: gate!.id, choice: 'approve' });
      await session.waitFor(
        (v) =>
          v.status === 'idle' &&
          v.transcript.filter((m) => m.role === 'tool').length === 2 &&
          v.transcript.at(-1)?.role === 'assistant',
        'approved tool',
      );
      approval.push(performance.now() - start);
    }
    lines.push(summary('plain message -> answer', plain));
    lines.push(summary('message -> auto tool -> answer', auto));
    lines.push(summary('approve click -> tool run -> answer', approval));

    const concurrent = 20;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: concurrent }, async (_, i) => {
        const session = new TestSession(env.client, 'bench');
        await session.say(`parallel ${i}`);
        await session.idle();
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    lines.push(
      `${`${concurrent} sessions started at once -> all answered`.padEnd(44)} ${seconds.toFixed(2)} s  (${(concurrent / seconds).toFixed(1)} turns/s)`,
    );
    // A long session: many turns across continue-as-new, then a worker restart and the time to the next answer.
    const turns = Number(process.env.BENCH_LONG_TURNS ?? 500);
    long = new TestSession(env.client, 'bench');
    long.pollMs = 10;
    const startLong = performance.now();
    for (let i = 0; i < turns; i++) {
      await long.say(i % 10 === 0 ? 'what time is it' : `turn ${i}`);
      await long.waitFor(
        (v) =>
          v.status === 'idle' &&
          v.queued === 0 &&
          v.transcript.filter((m) => m.role === 'user').length === i + 1 &&
          v.transcript.at(-1)?.role === 'assistant',
        `turn ${i}`,
      );
    }
    const longSeconds = (performance.now() - startLong) / 1000;
    const runs: number[] = [];
    for await (const run of env.client.workflow.list({ query: `WorkflowId = '${long.workflowId}'` }))
      runs.push(run.historyLength ?? 0);
    const current = await long.handle.describe();
    const transcriptKiB = JSON.stringify((await long.state()).transcript).length / 1024;
    lines.push(
      `${`${turns}-turn session`.padEnd(44)} ${longSeconds.toFixed(1)} s, ${runs.length} runs, longest history ${Math.max(...runs, current.historyLength)} events (limit 51,200), transcript ${transcriptKiB.toFixed(0)} KiB carried`,
    );
  });
  const restarted = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'bench',
    workflowsPath: require.resolve('../workflows'),
    activities: createActivities({ config, client: env.client, ledger }),
  });
  const resumeStart = performance.now();
  await restarted.runUntil(async () => {
    await long!.say('after restart');
    await long!.waitFor(
      (v) =>
        v.status === 'idle' &&
        v.transcript.at(-1)?.role === 'assistant' &&
        v.transcript.some((m) => m.role === 'user' && m.text === 'after restart'),
      'the answer after restart',
    );
  });
  lines.push(
    `${'new worker -> answer in that long session'.padEnd(44)} ${(performance.now() - resumeStart).toFixed(0)} ms (includes worker start)`,
  );

  ledger.close();
  await env.teardown();
  process.stdout.write(
    `\nBenchmark (scripted model, local dev server, in-process worker, state polled every 10 ms, ${os.cpus().length} CPUs, Node ${process.version})\n`,
  );
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
