/** A real Temporal dev server per test file (the CLI from TEMPORAL_CLI_PATH or PATH, else the SDK's download). */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { customSearchAttributes } from '../../common/search-attributes';
import { findTemporalCli } from '../../infra/temporal/cli';
import {
  drainPaceArgs,
  SEARCH_ATTRIBUTE_CACHE_ARGS,
  VISIBILITY_RATE_ARGS,
} from '../../infra/temporal/dev-server';

export async function startTestTemporal(
  options: {
    dbFilename?: string;
    port?: number;
    metricsPort?: number;
    /** Cache search attributes as a production server does (see SEARCH_ATTRIBUTE_CACHE_ARGS); the bench does. */
    cacheSearchAttributes?: boolean;
    /** Pace a deploy's drain as `npm start`'s server does with WORKER_DRAIN_RATE (signals a second). */
    drainRate?: number;
    /** The visibility rate `npm start`'s server allows ("Needs you" reads), instead of the server's default. */
    visibilityRate?: boolean;
  } = {},
): Promise<TestWorkflowEnvironment> {
  const cli = findTemporalCli(process.env.TEMPORAL_CLI_PATH);
  const extraArgs = [
    ...(options.metricsPort ? ['--metrics-port', String(options.metricsPort)] : []),
    ...(options.cacheSearchAttributes ? SEARCH_ATTRIBUTE_CACHE_ARGS : []),
    ...(options.drainRate ? drainPaceArgs(options.drainRate) : []),
    ...(options.visibilityRate ? VISIBILITY_RATE_ARGS : []),
  ];
  return await TestWorkflowEnvironment.createLocal({
    server: {
      executable: cli ? { type: 'existing-path', path: cli } : { type: 'cached-download' },
      searchAttributes: [...customSearchAttributes],
      ...(options.dbFilename ? { dbFilename: options.dbFilename } : {}),
      ...(options.port ? { port: options.port } : {}),
      ...(extraArgs.length ? { extraArgs } : {}),
      log: { format: 'pretty', level: 'error' },
    },
  });
}
