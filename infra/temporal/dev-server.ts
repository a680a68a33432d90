/**
 * The embedded Temporal dev server: persisted to SQLite under DATA_DIR. Its UI (TEMPORAL_UI): behind the gateway at
 * /temporal (on a loopback port browsers refuse to load), on its own port, or none.
 */
import path from 'node:path';
import { makeDataDirPrivate } from '../data-dir';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { TEMPORAL_UI_PATH, type AppConfig } from '../config';
import { customSearchAttributes } from '../../common/search-attributes';
import { findTemporalCli } from './cli';

/**
 * The dev server reads its search attributes from the database on every use unless told otherwise (so that
 * one created a moment ago is usable at once): every search-attribute upsert, visibility write and list query
 * then costs cluster-metadata and namespace reads, ~50 database operations per resumed session, which made the
 * single-threaded SQLite store the bottleneck (docs/BENCHMARKS.md). A production server caches them. Ours are
 * all registered at start (`--search-attribute`), so caching them costs nothing here.
 */
export const SEARCH_ATTRIBUTE_CACHE_ARGS = [
  '--dynamic-config-value',
  'system.forceSearchAttributesCacheRefreshOnRead=false',
];

/**
 * A deploy's drain is a batch signal the server paces (infra/temporal/drain-batch.ts). The server's own limit,
 * `worker.batcherRPS`, is what paces it on the servers we run (1.30 and the dev server ignore the request's rate), so
 * the embedded server gets the rate the operator set.
 */
export const drainPaceArgs = (perSecond: number): string[] => [
  '--dynamic-config-value',
  `worker.batcherRPS=${Math.max(1, Math.round(perSecond))}`,
];

/** "Needs you" reads visibility per open inbox (docs/SCALING.md): the server's default of 10 a second is too few. */
export const VISIBILITY_RATE_ARGS = ['--dynamic-config-value', 'frontend.namespaceRPS.visibility=200'];

export interface EmbeddedTemporal {
  address: string;
  stop(): Promise<void>;
}

export async function startEmbeddedTemporal(
  config: AppConfig,
  log: (message: string) => void = () => {},
): Promise<EmbeddedTemporal> {
  makeDataDirPrivate(config.dataDir, log);
  const cli = findTemporalCli(config.temporal.cliPath);
  const dbFilename = path.join(config.dataDir, 'temporal.sqlite');
  log(
    cli
      ? `starting the Temporal dev server (${cli}), database ${dbFilename}`
      : 'no Temporal CLI found: the SDK downloads it (needs internet)',
  );
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: cli ? { type: 'existing-path', path: cli } : { type: 'cached-download' },
      dbFilename,
      namespace: config.temporal.namespace,
      port: config.temporal.devServerPort,
      ui: config.temporal.ui !== 'off',
      ...(config.temporal.ui === 'off' ? {} : { uiPort: config.temporal.uiPort }),
      searchAttributes: [...customSearchAttributes],
      extraArgs: [
        ...SEARCH_ATTRIBUTE_CACHE_ARGS,
        ...drainPaceArgs(config.drainRatePerSecond),
        ...VISIBILITY_RATE_ARGS,
        // The server's HTTP API answers any Host and takes text/plain posts (signals): on a random port a
        // DNS-rebinding page could find it. On a port every browser refuses to load, none can.
        '--http-port',
        String(config.temporal.httpPort),
        // Behind the gateway: loopback only, under the path the gateway serves it at.
        ...(config.temporal.ui === 'gateway'
          ? ['--ui-ip', '127.0.0.1', '--ui-public-path', TEMPORAL_UI_PATH]
          : []),
      ],
    },
  });
  // The server's database files, made with the server's umask: private like the rest of DATA_DIR.
  makeDataDirPrivate(config.dataDir, log);
  return {
    address: env.address,
    stop: () => env.teardown(),
  };
}
