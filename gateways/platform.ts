/** What every platform folder receives; adding a platform is one folder plus one line in registry.ts. */
import type { StreamHub } from './stream-hub';
import type { RequestListener } from 'node:http';
import type { Client } from '@temporalio/client';
import type { AppConfig } from '../infra/config';
import type { CredentialService } from '../infra/credentials/service';
import type { Logger } from '../infra/log';
import type { WebAuth } from './web/auth/web-auth';

export interface GatewayDeps {
  config: AppConfig;
  client: Client;
  log: Logger;
  /** The vault and providers, opened on first use. */
  credentials: () => CredentialService;
  /** Who is calling the web chat (and the OAuth start page, the missions API, the codec endpoint). */
  webAuth: WebAuth;
  /** Work to stop when the gateway closes (live views' watches), before its Temporal connection closes. */
  onClose: (stop: () => void) => void;
  /** Streamed answers' partial text from workers, for the web chat (stream-hub.ts). */
  streams: StreamHub;
}

/** A platform whose SDK brings its own transport: an HTTP receiver under `prefix`, or a connection it starts. */
export interface NodePlatform {
  prefix?: string;
  listener?: RequestListener;
  start?(): Promise<void>;
  stop?(): Promise<void>;
}
