/**
 * Chaos: SIGKILL the worker in the middle of things. A model call is repeated (it only reads); a tool run
 * whose worker died is not run again: the workflow history knows it started, so after a restart (with a
 * fresh DATA_DIR or not, see two-workers.test.ts) its result says the outcome is unknown.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import { FakeOpenAi } from '../helpers/fake-openai';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { chaosRuns, Tally } from './summary';

const RUNS = chaosRuns();

let env: TestWorkflowEnvironment;
let stack: Stack | undefined;

beforeAll(async () => {
  env = await startTestTemporal();
});
afterEach(async () => {
  await stack?.stop();
  stack = undefined;
});
afterAll(async () => {
  await env?.teardown();
});

async function killDuringToolRun(tally: Tally, session: string): Promise<void> {
  await stack!.web.say(session, 'run `echo started >> log.txt; sleep 2; echo finished >> log.txt`');
  const gate = await stack!.web.pendingGate(session);
  await stack!.web.decide(session, gate.id, 'approve');
  const log = path.join(sessionWorkdir(stack!.env.DATA_DIR!, `session:web:${session}`), 'log.txt');
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && !(existsSync(log) && readFileSync(log, 'utf8').includes('started')))
    await new Promise((resolve) => setTimeout(resolve, 50));
  await stack!.worker.kill('SIGKILL');
  await stack!.restartWorker();
  const view = await stack!.web.answered(session);
  const results = view.transcript.filter((m) => m.role === 'tool');
  const runs = readFileSync(log, 'utf8').match(/started/g)?.length ?? 0;
  if (results.length === 0) tally.lost++;
  tally.check(
    runs === 1 &&
      results.length === 1 &&
      results[0]!.status === 'error' &&
      results[0]!.content.startsWith('interrupted: may or may not have run'),
    () => `${session}: ran ${runs} time(s); results ${JSON.stringify(results)}`,
  );
}

describe('worker killed mid-flight', () => {
  it(
    'reports a tool run cut off by the kill as interrupted, and never runs it a second time',
    async () => {
      stack = await startStack({ temporalAddress: env.address });
      const tally = new Tally();
      for (let i = 0; i < RUNS; i++) {
        const session = `kill-tool-${i}`;
        try {
          await killDuringToolRun(tally, session);
        } catch (error) {
          tally.check(false, () => `${session}: ${(error as Error).message}`);
        }
      }
      tally.finish('worker SIGKILL during a tool run');
    },
    RUNS * 90_000 + 60_000,
  );

  it(
    'loses and repeats nothing when the worker is killed while a gate waits',
    async () => {
      stack = await startStack({ temporalAddress: env.address });
      const tally = new Tally();
      for (let i = 0; i < RUNS; i++) {
        const session = `kill-gate-${i}`;
        try {
          await stack.web.say(session, 'run `echo waited >> log.txt`');
          const gate = await stack.web.pendingGate(session);
          await stack.worker.kill('SIGKILL');
          await stack.restartWorker();
          await stack.web.decide(session, gate.id, 'approve');
          const view = await stack.web.answered(session);
          const results = view.transcript.filter((m) => m.role === 'tool');
          if (results.length === 0) tally.lost++;
          const log = path.join(sessionWorkdir(stack.env.DATA_DIR!, `session:web:${session}`), 'log.txt');
          const ran = readFileSync(log, 'utf8').match(/waited/g)?.length ?? 0;
          tally.check(
            results.length === 1 &&
              results[0]!.status === 'ok' &&
              ran === 1 &&
              view.transcript.filter((m) => m.role === 'user').length === 1,
            () => `${session}: ran ${ran} time(s); results ${JSON.stringify(results).slice(0, 300)}`,
          );
        } catch (error) {
          tally.check(false, () => `${session}: ${(error as Error).message}`);
        }
      }
      tally.finish('worker SIGKILL during a gate wait');
    },
    RUNS * 90_000 + 60_000,
  );

  it(
    'repeats a model call that was in flight, losing nothing and answering once',
    async () => {
      // Each session's first model call hangs (the worker is killed during it); its next one answers.
      const seen = new Map<string, number>();
      const fake = await new FakeOpenAi((request) => {
        const said = String(request.messages.find((m) => m.role === 'user')?.content);
        const calls = (seen.get(said) ?? 0) + 1;
        seen.set(said, calls);
        return calls === 1 ? { hang: true } : { text: `answer after ${calls} calls to: ${said}` };
      }).start();
      const tally = new Tally();
      try {
        stack = await startStack({
          temporalAddress: env.address,
          env: { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'k' },
        });
        for (let i = 0; i < RUNS; i++) {
          const session = `kill-model-${i}`;
          const said = `hello ${i}`;
          try {
            await stack.web.say(session, said);
            const deadline = Date.now() + 20_000;
            while (!seen.has(said) && Date.now() < deadline)
              await new Promise((resolve) => setTimeout(resolve, 50));
            await stack.worker.kill('SIGKILL');
            await stack.restartWorker();
            const view = await stack.web.answered(session);
            tally.lost += Math.max(0, 2 - view.transcript.length);
            tally.check(
              view.transcript.map((m) => m.role).join(',') === 'user,assistant' &&
                (view.transcript[1] as { text: string }).text === `answer after 2 calls to: ${said}`,
              () => `${session}: ${JSON.stringify(view.transcript).slice(0, 300)}`,
            );
          } catch (error) {
            tally.check(false, () => `${session}: ${(error as Error).message}`);
          }
        }
      } finally {
        await fake.stop();
      }
      tally.finish('worker SIGKILL during a model call');
    },
    RUNS * 90_000 + 60_000,
  );
});
