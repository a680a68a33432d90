/** The agent loop never spins on the same failing call: it stops after a few identical errors and says so. */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { withWorker } from '../helpers/worker';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

describe('repeated failures', () => {
  it('stops the turn after three identical failing calls and tells the user, well before the step limit', async () => {
    await withWorker(
      env,
      async (taskQueue) => {
        const s = new TestSession(env.client, taskQueue);
        await s.say('fail loop');
        const view = await s.idle();
        const results = view.transcript.filter((m) => m.role === 'tool');
        expect(results).toHaveLength(3);
        expect(results.every((m) => m.role === 'tool' && m.status === 'error')).toBe(true);
        const last = view.transcript.at(-1)!;
        expect(last).toMatchObject({ role: 'assistant', synthetic: true });
        expect((last as { text: string }).text).toMatch(
          /^I stopped: http_request failed the same way 3 times/,
        );
      },
      { maxSteps: 12 },
    );
  });
});
