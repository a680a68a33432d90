/** A real worker in the test process, on its own task queue, with the real activities. */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { createActivities } from '../../activities';
import type { AppConfig } from '../../infra/config';
import { workflowCode } from '../../workers/workflow-code';
import { testConfig } from './config';
import { activityHeartbeats } from '../../activities/heartbeat';

export async function createTestWorker(
  env: TestWorkflowEnvironment,
  config: AppConfig,
  taskQueue = `test-${randomUUID()}`,
) {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    ...workflowCode(inject('workflowBundlePath')),
    ...activityHeartbeats,
    activities: createActivities({
      config: { ...config, temporal: { ...config.temporal, taskQueue } },
      client: env.client,
    }),
  });
  return { worker, taskQueue };
}

/** Runs `body` while a fresh worker (own task queue, own DATA_DIR and policy) serves it. */
export async function withWorker(
  env: TestWorkflowEnvironment,
  body: (taskQueue: string, config: AppConfig) => Promise<void>,
  policy: Record<string, unknown> = {},
  extraEnv: Record<string, string> = {},
): Promise<void> {
  const config = testConfig(policy, extraEnv);
  const { worker, taskQueue } = await createTestWorker(env, config);
  await worker.runUntil(body(taskQueue, config));
}
