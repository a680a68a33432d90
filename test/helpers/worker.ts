/** A real worker in the test process, on its own task queue, with the real activities. */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { createActivities } from '../../activities';
import { ToolRunLedger } from '../../activities/tools/ledger';
import type { AppConfig } from '../../common/config';

export async function createTestWorker(
  env: TestWorkflowEnvironment,
  config: AppConfig,
  taskQueue = `test-${randomUUID()}`,
) {
  const ledger = new ToolRunLedger(config.dataDir);
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities: createActivities({
      config: { ...config, temporal: { ...config.temporal, taskQueue } },
      client: env.client,
      ledger,
    }),
  });
  return { worker, taskQueue, ledger };
}
