/** Chaos: ten clicks on one gate at once from two people allowed to decide: exactly one decision wins. */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestSession, toolResults } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { withWorker } from '../helpers/worker';
import { scenario } from './summary';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

describe('racing clicks', () => {
  it('takes exactly one of ten concurrent decisions and tells every other clicker', async () => {
    await withWorker(
      env,
      async (taskQueue) => {
        const session = new TestSession(env.client, taskQueue);
        await session.say('run `echo raced >> count.txt`');
        const [gate] = await session.pendingGate();
        await scenario('10 racing clicks on one gate, two people', 10, async () => {
          await Promise.all(
            Array.from({ length: 10 }, (_, i) =>
              session.decide({
                gateId: gate!.id,
                choice: i % 2 ? 'deny' : 'approve',
                userId: i % 2 ? 'bob' : 'alice',
                reason: `click ${i}`,
              }),
            ),
          );
          const view = await session.idle();
          expect(toolResults(view)).toHaveLength(1);
          const winner = view.gates[0]!.resolution!;
          const told = view.notices.filter((n) => n.to && n.text.includes('already'));
          expect(told).toHaveLength(9);
          expect(new Set(told.map((n) => n.to))).toEqual(new Set(['alice', 'bob']));
          expect(told.every((n) => n.text.includes(`by @${winner.by}`))).toBe(true);
          // Every click is accounted for: one decision and nine explained refusals.
          return { passed: 1 + told.length, lost: 10 - 1 - told.length };
        });
      },
      { approvers: ['bob'] },
    );
  });
});
