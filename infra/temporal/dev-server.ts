/**
 * The embedded Temporal dev server: persisted to SQLite under DATA_DIR. Its UI (TEMPORAL_UI): behind the gateway at
 * /temporal (on a loopback port browsers refuse to load), on its own port, or none.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
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
  /** Where the server writes its own output (its banner, its warnings): DATA_DIR/temporal-server.log. */
  logFile?: string;
  stop(): Promise<void>;
}

/** The server's own output goes here, not to the terminal: `npm start` prints only what a person needs. */
export const SERVER_LOG_FILE = 'temporal-server.log';

/** The CLI's name for each search attribute type. */
const ATTRIBUTE_TYPE_NAMES: Record<string, string> = {
  TEXT: 'Text',
  KEYWORD: 'Keyword',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

/** The arguments the embedded server starts with (also what the SDK would pass, plus ours). */
export function devServerArgs(config: AppConfig, dbFilename: string): string[] {
  const ui = config.temporal.ui;
  return [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(config.temporal.devServerPort),
    '--namespace',
    config.temporal.namespace,
    '--db-filename',
    dbFilename,
    '--log-level',
    'warn',
    ...customSearchAttributes.flatMap((key) => [
      '--search-attribute',
      `${key.name}=${ATTRIBUTE_TYPE_NAMES[key.type]}`,
    ]),
    ...(ui === 'off'
      ? ['--headless']
      : ['--ui-port', String(config.temporal.uiPort), '--ui-disable-news-fetch']),
    ...SEARCH_ATTRIBUTE_CACHE_ARGS,
    ...drainPaceArgs(config.drainRatePerSecond),
    ...VISIBILITY_RATE_ARGS,
    // The server's HTTP API answers any Host and takes text/plain posts (signals): on a random port a
    // DNS-rebinding page could find it. On a port every browser refuses to load, none can.
    '--http-port',
    String(config.temporal.httpPort),
    // Behind the gateway: loopback only, under the path the gateway serves it at.
    ...(ui === 'gateway' ? ['--ui-ip', '127.0.0.1', '--ui-public-path', TEMPORAL_UI_PATH] : []),
  ];
}

export async function startEmbeddedTemporal(
  config: AppConfig,
  log: (message: string) => void = () => {},
): Promise<EmbeddedTemporal> {
  makeDataDirPrivate(config.dataDir, log);
  const cli = findTemporalCli(config.temporal.cliPath);
  const dbFilename = path.join(config.dataDir, 'temporal.sqlite');
  if (!cli) {
    log('no Temporal CLI found: the SDK downloads it (needs internet)');
    return await startDownloadedServer(config, dbFilename);
  }
  const logFile = path.join(config.dataDir, SERVER_LOG_FILE);
  log(`starting the Temporal dev server (${cli}), database ${dbFilename}, its log ${logFile}`);
  const out = openSync(logFile, 'a', 0o600);
  const logStart = statSync(logFile).size;
  // In a process group of its own, so Ctrl-C reaches the worker and gateway first and the server stops last (no
  // burst of "connection refused" while they shut down). A shell keeps it tied to this process: when this process
  // ends, however it ends, its pipe closes and the shell stops the server, so no server is left behind.
  const child = spawn(
    'sh',
    [
      '-c',
      '"$@" & server=$!; cat >/dev/null; kill -TERM "$server" 2>/dev/null; wait "$server"',
      'sh',
      cli,
      ...devServerArgs(config, dbFilename),
    ],
    { detached: true, stdio: ['pipe', out, out] },
  );
  closeSync(out);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const address = `127.0.0.1:${config.temporal.devServerPort}`;
  const ready = await Promise.race([
    listening(config.temporal.devServerPort, 60_000).then(() => true),
    exited.then(() => false),
  ]);
  if (!ready) {
    const said = readFileSync(logFile, 'utf8').slice(logStart).trim().split('\n').slice(-5).join('\n');
    throw new Error(`the Temporal dev server stopped at start (its log, ${logFile}):\n${said}`);
  }
  // The server's database files, made with the server's umask: private like the rest of DATA_DIR.
  makeDataDirPrivate(config.dataDir, log);
  return {
    address,
    logFile,
    async stop() {
      child.stdin?.end();
      const stopped = await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)]);
      if (!stopped && child.pid) process.kill(-child.pid, 'SIGKILL');
    },
  };
}

/** Without a CLI on this machine: the SDK downloads one and runs it (its output then goes to the terminal). */
async function startDownloadedServer(config: AppConfig, dbFilename: string): Promise<EmbeddedTemporal> {
  const [, , ...args] = devServerArgs(config, dbFilename);
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'cached-download' },
      dbFilename,
      namespace: config.temporal.namespace,
      port: config.temporal.devServerPort,
      ui: config.temporal.ui !== 'off',
      ...(config.temporal.ui === 'off' ? {} : { uiPort: config.temporal.uiPort }),
      searchAttributes: [...customSearchAttributes],
      extraArgs: args.slice(args.indexOf('--dynamic-config-value')),
    },
  });
  makeDataDirPrivate(config.dataDir);
  return { address: env.address, stop: () => env.teardown() };
}

/** Resolves once something accepts connections on the loopback port. */
async function listening(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline)
      throw new Error(`the Temporal dev server did not listen on ${port} within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
