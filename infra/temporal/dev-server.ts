/** The embedded Temporal dev server: persisted to SQLite under DATA_DIR, UI on TEMPORAL_UI_PORT. */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { AppConfig } from '../config';
import { customSearchAttributes } from '../../common/search-attributes';
import { findTemporalCli } from './cli';

export interface EmbeddedTemporal {
  address: string;
  stop(): Promise<void>;
}

export async function startEmbeddedTemporal(
  config: AppConfig,
  log: (message: string) => void = () => {},
): Promise<EmbeddedTemporal> {
  mkdirSync(config.dataDir, { recursive: true });
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
      ui: true,
      uiPort: config.temporal.uiPort,
      searchAttributes: [...customSearchAttributes],
    },
  });
  return {
    address: env.address,
    stop: () => env.teardown(),
  };
}
