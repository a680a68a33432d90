/**
 * A worker process for the bare workflow (bare-workflow.ts), started by the bench like `npm run worker` starts the
 * real one and with the same cache (WORKER_MAX_CACHED_WORKFLOWS), so parked figures compare process to process.
 */
import { NativeConnection, Worker } from '@temporalio/worker';

async function main(): Promise<void> {
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const worker = await Worker.create({
    connection,
    taskQueue: process.env.TEMPORAL_TASK_QUEUE!,
    workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
    activities: { echo: async (text: string) => await Promise.resolve(text) },
    maxCachedWorkflows: Number(process.env.WORKER_MAX_CACHED_WORKFLOWS ?? 500),
  });
  process.on('SIGTERM', () => worker.shutdown());
  process.stdout.write('"worker started"\n');
  await worker.run();
  await connection.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
