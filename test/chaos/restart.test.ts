/**
 * Restart-safety, by really killing processes: a gate opened before a worker, gateway or Temporal
 * restart still resolves from a click afterwards, and the tool runs exactly once.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import { freePort } from '../helpers/processes';
import { tempDir } from '../helpers/config';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { chaosRuns, Tally } from './summary';

const RUNS = chaosRuns();

let env: TestWorkflowEnvironment | undefined;
let stack: Stack | undefined;

afterEach(async () => {
  await stack?.stop();
  stack = undefined;
});
afterAll(async () => {
  await env?.teardown();
});

const COMMAND = 'run `echo ran >> count.txt; echo restart-ok`';

function runs(sessionId: string): number {
  const file = path.join(sessionWorkdir(stack!.env.DATA_DIR!, `session:web:${sessionId}`), 'count.txt');
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
}

/** Counted form of expectAnsweredOnce for the repeated scenarios: a missing result is lost, a second run fails. */
async function answeredOnce(sessionId: string, tally: Tally): Promise<{ lost: number }> {
  const view = await stack!.web.answered(sessionId);
  const results = view.transcript.filter((m) => m.role === 'tool');
  tally.check(
    results.length === 1 && results[0]!.status === 'ok' && results[0]!.content.includes('restart-ok'),
    () => `${sessionId}: results ${JSON.stringify(results).slice(0, 300)}`,
  );
  tally.check(runs(sessionId) === 1, () => `${sessionId}: the tool ran ${runs(sessionId)} times`);
  return { lost: results.length === 0 ? 1 : 0 };
}

/** The conversation finished, its one tool call has its result, and the tool ran exactly once. */
async function expectAnsweredOnce(sessionId: string): Promise<{ passed: number; lost: number }> {
  const view = await stack!.web.answered(sessionId);
  const results = view.transcript.filter((m) => m.role === 'tool');
  expect(results).toEqual([
    expect.objectContaining({ status: 'ok', content: expect.stringContaining('restart-ok') }),
  ]);
  expect(runs(sessionId)).toBe(1);
  return { passed: 1, lost: 1 - results.length };
}

describe('restart safety', () => {
  it('accepts a click while no worker runs; a new worker runs the tool exactly once', async () => {
    env = await startTestTemporal();
    stack = await startStack({ temporalAddress: env.address });
    const gate = await (async () => {
      await stack.web.say('worker-kill', COMMAND);
      return await stack.web.pendingGate('worker-kill');
    })();

    await stack.worker.kill('SIGKILL');
    const click = await stack.web.decide('worker-kill', gate.id, 'approve');
    expect(click.status).toBe(202);
    const unavailable = await stack.web.request('GET', '/sessions/worker-kill');
    expect(unavailable.status).toBe(503);

    await stack.restartWorker();
    await expectAnsweredOnce('worker-kill');
  });

  it('takes answers to a question while no worker runs, and the run continues with them after a restart', async () => {
    env ??= await startTestTemporal();
    stack = await startStack({ temporalAddress: env.address });
    await stack.web.say('question-kill', 'ask me');
    const gate = await stack.web.pendingGate('question-kill');
    expect(gate.kind).toBe('question');

    await stack.worker.kill('SIGKILL');
    const submitted = await stack.web.request('POST', '/answers', {
      workflowId: 'session:web:question-kill',
      gateId: gate.id,
      answers: [
        { question: 'Environment', selected: ['staging'] },
        { question: 'Checks', selected: ['build'] },
      ],
    });
    expect(submitted.status).toBe(202);

    await stack.restartWorker();
    const view = await stack.web.answered('question-kill');
    expect(view.transcript.at(-1)).toMatchObject({
      role: 'assistant',
      text: expect.stringContaining('Environment: staging; Checks: build'),
    });
  });

  it('resolves a gate from a click that arrives through a restarted gateway', async () => {
    env ??= await startTestTemporal();
    stack = await startStack({ temporalAddress: env.address });
    const tally = new Tally();
    for (let run = 0; run < RUNS; run++) {
      const sessionId = `gateway-restart-${run}`;
      await stack.web.say(sessionId, COMMAND);
      const gate = await stack.web.pendingGate(sessionId);
      await stack.restartGateway();
      const click = await stack.web.decide(sessionId, gate.id, 'approve');
      tally.check(click.status === 202, () => `run ${run}: click answered ${click.status}`);
      tally.lost += (await answeredOnce(sessionId, tally)).lost;
    }
    tally.finish('gateway restarted between prompt and click');
  });

  it('resolves a gate after the Temporal dev server restarts on the same database file', async () => {
    await env?.teardown();
    const dbFilename = path.join(tempDir('agent-temporal-db-'), 'temporal.sqlite');
    const port = await freePort();
    env = await startTestTemporal({ dbFilename, port });
    stack = await startStack({ temporalAddress: env.address });
    const tally = new Tally();
    for (let run = 0; run < RUNS; run++) {
      const sessionId = `server-restart-${run}`;
      await stack.web.say(sessionId, COMMAND);
      const gate = await stack.web.pendingGate(sessionId);
      await env.teardown();
      env = await startTestTemporal({ dbFilename, port });
      // The worker and gateway processes keep running and reconnect on their own.
      const click = await (async () => {
        for (let attempt = 0; ; attempt++) {
          const response = await stack!.web.decide(sessionId, gate.id, 'approve').catch(() => undefined);
          if (response?.status === 202 || attempt > 50) return response;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      })();
      tally.check(click?.status === 202, () => `run ${run}: click answered ${click?.status}`);
      tally.lost += (await answeredOnce(sessionId, tally)).lost;
    }
    tally.finish('Temporal server restarted (same DB) mid-wait');
  });
});
