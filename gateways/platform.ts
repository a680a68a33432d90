/** What every platform folder receives; adding a platform is one folder plus one line in registry.ts. */
import type { RequestListener } from 'node:http';
import type { Client } from '@temporalio/client';
import type { AppConfig } from '../common/config';
import type { Logger } from '../common/log';

export interface GatewayDeps {
  config: AppConfig;
  client: Client;
  log: Logger;
}

/** A platform whose SDK brings its own transport: an HTTP receiver under `prefix`, or a connection it starts. */
export interface NodePlatform {
  prefix?: string;
  listener?: RequestListener;
  start?(): Promise<void>;
  stop?(): Promise<void>;
}
