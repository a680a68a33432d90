/** `npm run worker`: one worker process against TEMPORAL_ADDRESS (default: the local dev server). */
import { loadConfig } from '../infra/config';
import { describeDotEnv, loadDotEnv } from '../infra/env-file';
import { createLogger } from '../infra/log';
import { startWorker } from './run-worker';

async function main(): Promise<void> {
  const dotEnv = loadDotEnv();
  const config = loadConfig();
  const log = createLogger('worker', config.logLevel);
  if (dotEnv) log.info(describeDotEnv(dotEnv));
  const address = config.temporal.address ?? `localhost:${config.temporal.devServerPort}`;
  const worker = await startWorker(config, address, log);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log.info(`${signal}: shutting down`);
      void worker.shutdown();
    });
  }
  await worker.done;
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});
