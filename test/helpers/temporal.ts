/** A real Temporal dev server per test file (the CLI from TEMPORAL_CLI_PATH or PATH, else the SDK's download). */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { customSearchAttributes } from '../../common/search-attributes';
import { findTemporalCli } from '../../infra/temporal/cli';

export async function startTestTemporal(
  options: { dbFilename?: string; port?: number; metricsPort?: number } = {},
): Promise<TestWorkflowEnvironment> {
  const cli = findTemporalCli(process.env.TEMPORAL_CLI_PATH);
  return await TestWorkflowEnvironment.createLocal({
    server: {
      executable: cli ? { type: 'existing-path', path: cli } : { type: 'cached-download' },
      searchAttributes: [...customSearchAttributes],
      ...(options.dbFilename ? { dbFilename: options.dbFilename } : {}),
      ...(options.port ? { port: options.port } : {}),
      ...(options.metricsPort ? { extraArgs: ['--metrics-port', String(options.metricsPort)] } : {}),
      log: { format: 'pretty', level: 'error' },
    },
  });
}
