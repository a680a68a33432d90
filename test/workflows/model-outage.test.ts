/**
 * A model API that stays down longer than callModel's own retries: the turn waits with a visible status and
 * the message is answered once the API is back, instead of ending with an error and dropping the message.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi } from '../helpers/fake-openai';
import { lastAnswer, TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { withWorker } from '../helpers/worker';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

describe('model outage', () => {
  it('keeps the message while the model API is down, says since when, and answers when it is back', async () => {
    let down = true;
    const fake = await new FakeOpenAi(
      () =>
        down
          ? { status: 503, body: { error: { message: 'The server is overloaded', type: 'server_error' } } }
          : { text: 'back and answering' },
      { latency: [20, 80] },
    ).start();
    try {
      await withWorker(
        env,
        async (taskQueue) => {
          const s = new TestSession(env.client, taskQueue);
          await s.say('hello while the model is down');
          // callModel's own retries (about 30 s) run out; the turn then waits instead of failing.
          const waiting = await s.waitFor(
            (v) => v.notices.some((n) => n.text.startsWith('The model is unavailable')),
            'the outage notice',
            120_000,
          );
          expect(waiting.status).toBe('running');
          expect(waiting.transcript.filter((m) => m.role === 'assistant')).toHaveLength(0);
          const described = await env.client.workflow.getHandle(s.workflowId).describe();
          expect(described.memo?.waitingFor).toMatch(/^model unavailable, retrying since \d\d:\d\d UTC$/);

          down = false;
          const answered = await s.waitFor(
            (v) => v.status === 'idle' && v.transcript.at(-1)?.role === 'assistant',
            'the answer after the outage',
            120_000,
          );
          expect(lastAnswer(answered)).toBe('back and answering');
          expect(answered.transcript.filter((m) => m.role === 'user')).toHaveLength(1);
          expect(answered.notices.some((n) => n.text === 'The model is answering again.')).toBe(true);
          const after = await env.client.workflow.getHandle(s.workflowId).describe();
          expect(after.memo?.waitingFor ?? null).toBeNull();
        },
        {},
        { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'k' },
      );
    } finally {
      await fake.stop();
    }
  });
});
