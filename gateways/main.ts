/** `npm run gateway`: one stateless gateway process (run as many as you like). */
import { loadConfig } from '../infra/config';
import { describeDotEnv, loadDotEnv } from '../infra/env-file';
import { createLogger } from '../infra/log';
import { startGateway } from './serve';

async function main(): Promise<void> {
  const dotEnv = loadDotEnv();
  const config = loadConfig();
  const log = createLogger('gateway', config.logLevel);
  if (dotEnv) log.info(describeDotEnv(dotEnv));
  const gateway = await startGateway(
    config,
    config.temporal.address ?? `localhost:${config.temporal.devServerPort}`,
    log,
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log.info(`${signal}: shutting down`);
      void gateway.close().then(() => process.exit(0));
    });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});
