/**
 * `npm start`: the whole system in one command. Starts the embedded Temporal dev server (unless
 * TEMPORAL_ADDRESS points at one), the worker and the gateway; Ctrl-C stops them in reverse order.
 */
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../infra/config';
import { createLogger } from '../infra/log';
import { startEmbeddedTemporal, type EmbeddedTemporal } from '../infra/temporal/dev-server';
import { startGateway } from '../gateways/serve';
import { startWorker } from '../workers/run-worker';

async function main(): Promise<void> {
  const loaded = loadConfig();
  // One machine: the worker streams answers to this gateway over loopback, with a secret made for this run.
  const config = loaded.stream.urls.length
    ? loaded
    : {
        ...loaded,
        stream: {
          urls: [`http://127.0.0.1:${loaded.port}`],
          token: loaded.stream.token ?? randomBytes(24).toString('hex'),
        },
      };
  const log = createLogger('start', config.logLevel);
  let embedded: EmbeddedTemporal | undefined;
  if (!config.temporal.address) {
    embedded = await startEmbeddedTemporal(config, (m) => log.info(m));
    log.info('Temporal dev server ready', { address: embedded.address, ui: config.temporal.uiUrl });
  }
  const address = config.temporal.address ?? embedded!.address;
  const worker = await startWorker(config, address, createLogger('worker', config.logLevel));
  const gateway = await startGateway(config, address, createLogger('gateway', config.logLevel));
  process.stdout.write(
    `\n  Web chat:     ${gateway.chatUrl}\n${config.temporal.uiUrl ? `  Temporal UI:  ${config.temporal.uiUrl}\n` : ''}  Stop with Ctrl-C.\n\n`,
  );

  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${why}: stopping gateway, worker and Temporal`);
    await gateway.close().catch(() => {});
    await worker.shutdown().catch(() => {});
    await embedded?.stop().catch(() => {});
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  worker.done.catch(async (error: unknown) => {
    log.error('the worker stopped', { error: (error as Error).message });
    await stop('worker failure');
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});
