/**
 * Chaos: SIGKILL the worker in the middle of things. A model call is repeated (it only reads); a tool run
 * whose worker died is not run again silently: its result says the outcome is unknown.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sessionWorkdir } from '../../activities/tools/shell';
import { FakeOpenAi } from '../helpers/fake-openai';
import { startStack, type Stack } from '../helpers/stack';
import { startTestTemporal } from '../helpers/temporal';
import { scenario } from './summary';

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

describe('worker killed mid-flight', () => {
  it('reports a tool run cut off by the kill as interrupted, and never runs it a second time', async () => {
    stack = await startStack({ temporalAddress: env.address });
    await stack.web.say('kill-tool', 'run `echo started >> log.txt; sleep 2; echo finished >> log.txt`');
    const gate = await stack.web.pendingGate('kill-tool');
    await stack.web.decide('kill-tool', gate.id, 'approve');
    const log = path.join(sessionWorkdir(stack.env.DATA_DIR!, 'session:web:kill-tool'), 'log.txt');
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      try {
        if (readFileSync(log, 'utf8').includes('started')) break;
      } catch {
        // not yet
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await scenario('worker SIGKILL during a tool run', 1, async () => {
      await stack!.worker.kill('SIGKILL');
      await stack!.restartWorker();
      const view = await stack!.web.answered('kill-tool');
      const results = view.transcript.filter((m) => m.role === 'tool');
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ status: 'error', content: expect.stringContaining('interrupted') });
      expect(readFileSync(log, 'utf8').match(/started/g)).toHaveLength(1);
      return { passed: 1, lost: 1 - results.length };
    });
  });

  it('loses and repeats nothing when the worker is killed while a gate waits', async () => {
    stack = await startStack({ temporalAddress: env.address });
    await stack.web.say('kill-gate', 'run `echo waited >> log.txt`');
    const gate = await stack.web.pendingGate('kill-gate');
    await scenario('worker SIGKILL during a gate wait', 1, async () => {
      await stack!.worker.kill('SIGKILL');
      await stack!.restartWorker();
      await stack!.web.decide('kill-gate', gate.id, 'approve');
      const view = await stack!.web.answered('kill-gate');
      const results = view.transcript.filter((m) => m.role === 'tool');
      expect(results).toEqual([expect.objectContaining({ status: 'ok' })]);
      expect(view.transcript.filter((m) => m.role === 'user')).toHaveLength(1);
      const log = path.join(sessionWorkdir(stack!.env.DATA_DIR!, 'session:web:kill-gate'), 'log.txt');
      expect(readFileSync(log, 'utf8').match(/waited/g)).toHaveLength(1);
      return { passed: 1, lost: 1 - results.length };
    });
  });

  it('repeats a model call that was in flight, losing nothing and answering once', async () => {
    let calls = 0;
    const fake = await new FakeOpenAi((request) => {
      calls++;
      return calls === 1
        ? { hang: true }
        : { text: `answer after ${calls} calls to: ${request.messages.at(-1)!.content}` };
    }).start();
    try {
      stack = await startStack({
        temporalAddress: env.address,
        env: { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'k' },
      });
      await stack.web.say('kill-model', 'hello');
      const deadline = Date.now() + 20_000;
      while (calls === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      await scenario('worker SIGKILL during a model call', 1, async () => {
        await stack!.worker.kill('SIGKILL');
        await stack!.restartWorker();
        const view = await stack!.web.answered('kill-model');
        expect(view.transcript.map((m) => m.role)).toEqual(['user', 'assistant']);
        expect(view.transcript[1]).toMatchObject({ text: 'answer after 2 calls to: hello' });
        return { passed: 1, lost: 2 - view.transcript.length };
      });
    } finally {
      await fake.stop();
    }
  });
});
