/**
 * Tool runs with side effects (workflows/session/tool-runs.ts): one attempt each, scheduled again by the
 * workflow only when the worker said nothing could start. Killed and deployed workers: test/chaos.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/processes';
import { TestSession, toolResults } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { withWorker } from '../helpers/worker';

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

describe('a tool call with side effects', () => {
  it('is tried again while it cannot start (the vault refuses connections), then reported as not run', async () => {
    // Nothing listens on this port: every attempt fails on the credential lookup, before the request.
    const refused = `postgres://agent@127.0.0.1:${await freePort()}/agent`;
    await withWorker(
      env,
      async (taskQueue) => {
        const session = new TestSession(env.client, taskQueue);
        await session.say(
          'call http_request {"method": "POST", "url": "https://api.weather.example/report", "auth": "weather"}',
        );
        const [gate] = await session.pendingGate();
        await session.decide({ gateId: gate!.id, choice: 'approve' });
        const view = await session.idle();
        expect(toolResults(view)).toEqual([
          expect.objectContaining({
            status: 'error',
            content: expect.stringMatching(/^not run: http_request could not start \(.*\); nothing ran$/s),
          }),
        ]);
        const scheduled = (await session.handle.fetchHistory()).events!.flatMap((event) => {
          const attributes = event.activityTaskScheduledEventAttributes;
          return attributes?.activityType?.name === 'runTool' ? [attributes] : [];
        });
        expect(scheduled).toHaveLength(5);
        for (const attempt of scheduled) expect(attempt.retryPolicy?.maximumAttempts).toBe(1);
      },
      {
        providers: {
          weather: { type: 'api_key', header: 'Authorization', apiHosts: ['api.weather.example'] },
        },
      },
      { DATABASE_URL: refused, VAULT_KEY: Buffer.alloc(32, 7).toString('base64') },
    );
  }, 120_000);
});
