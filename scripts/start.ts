/**
 * `npm start`: the whole system in one command. Starts the embedded Temporal dev server (unless
 * TEMPORAL_ADDRESS points at one), the worker and the gateway; Ctrl-C stops them in reverse order.
 */
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import { loadConfig } from '../infra/config';
import { describeDotEnv, loadDotEnv } from '../infra/env-file';
import { createLogger } from '../infra/log';
import { startEmbeddedTemporal, type EmbeddedTemporal } from '../infra/temporal/dev-server';
import { startGateway } from '../gateways/serve';
import { startWorker } from '../workers/run-worker';
import { startHeader } from './start-header';
import { StreamHub } from '../gateways/stream-hub';
import { throttledSink } from '../infra/stream-relay';

async function main(): Promise<void> {
  const dotEnv = loadDotEnv();
  // Calm by default: warnings and errors only, unless LOG_LEVEL says otherwise (npm run worker/gateway keep info).
  const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL || 'warn' });
  // The SDK's own lines ("Worker state changed") at the same level.
  Runtime.install({ logger: new DefaultLogger(config.logLevel.toUpperCase() as LogLevel) });
  process.stdout.write(
    '  Starting Temporal, the worker and the gateway (a first start takes a little longer)…\n',
  );
  // One process: the worker streams answers straight into the gateway's hub (STREAM_URL, if set, is used instead).
  const streams = new StreamHub();
  const inProcess = config.stream.urls.length
    ? {}
    : { stream: throttledSink((update) => streams.accept(update)) };
  const log = createLogger('start', config.logLevel);
  if (dotEnv) log.info(describeDotEnv(dotEnv));
  let embedded: EmbeddedTemporal | undefined;
  if (!config.temporal.address) {
    embedded = await startEmbeddedTemporal(config, (m) => log.info(m));
    log.info('Temporal dev server ready', { address: embedded.address, ui: config.temporal.uiUrl });
  }
  const address = config.temporal.address ?? embedded!.address;
  const worker = await startWorker(config, address, createLogger('worker', config.logLevel), inProcess);
  const gateway = await startGateway(config, address, createLogger('gateway', config.logLevel), { streams });
  process.stdout.write(
    startHeader(
      config,
      { chat: gateway.chatUrl, temporalUi: gateway.temporalUiUrl },
      embedded?.logFile,
      worker.shell,
    ),
  );

  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${why}: stopping gateway, worker and Temporal`);
    process.stdout.write('\n  Stopping the gateway, the worker and Temporal…\n');
    await gateway.close().catch(() => {});
    await worker.shutdown().catch(() => {});
    await embedded?.stop().catch(() => {});
    process.stdout.write('  Stopped. Everything is kept in DATA_DIR for the next start.\n');
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
