/** What every platform folder receives; adding a platform is one folder plus one line in registry.ts. */
import type { Client } from '@temporalio/client';
import type { AppConfig } from '../common/config';
import type { Logger } from '../common/log';

export interface GatewayDeps {
  config: AppConfig;
  client: Client;
  log: Logger;
}
