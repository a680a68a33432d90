/** Runs the gateway's HTTP server; used by `npm run gateway` and by `npm start`. */
import { serve } from '@hono/node-server';
import type { AppConfig } from '../common/config';
import type { Logger } from '../common/log';
import { connectClient } from '../common/temporal/connect';
import { createGatewayApp } from './app';

export interface RunningGateway {
  url: string;
  close(): Promise<void>;
}

export async function startGateway(config: AppConfig, address: string, log: Logger): Promise<RunningGateway> {
  const client = await connectClient(address, config.temporal.namespace);
  const app = createGatewayApp({ config, client, log });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () => resolve(s));
    s.once('error', reject);
  });
  const url = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${config.port}`;
  log.info('gateway listening', { url });
  return {
    url,
    async close() {
      // Live streams never end on their own, so open connections are cut rather than awaited.
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await client.connection.close();
    },
  };
}
