/** Runs the gateway's HTTP server; used by `npm run gateway` and by `npm start`. */
import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { AppConfig } from '../common/config';
import type { Logger } from '../common/log';
import { connectClient } from '../common/temporal/connect';
import { createGatewayApp } from './app';
import { nodePlatforms } from './registry';

export interface RunningGateway {
  url: string;
  close(): Promise<void>;
}

export async function startGateway(config: AppConfig, address: string, log: Logger): Promise<RunningGateway> {
  const client = await connectClient(address, config.temporal.namespace);
  const deps = { config, client, log };
  const app = createGatewayApp(deps);
  const honoListener = getRequestListener(app.fetch);
  // Platforms that bring their own HTTP receiver (Slack's Bolt) get their paths; everything else is Hono.
  const nodeRoutes = nodePlatforms.flatMap((platform) => {
    const listener = platform.listener(deps);
    return listener ? [{ prefix: platform.prefix, listener }] : [];
  });
  const server = createServer((req, res) => {
    const route = nodeRoutes.find((r) => req.url?.startsWith(r.prefix));
    void (route ? route.listener(req, res) : honoListener(req, res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const url = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${config.port}`;
  log.info('gateway listening', { url });
  return {
    url,
    async close() {
      // Live streams never end on their own, so open connections are cut rather than awaited.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await client.connection.close();
    },
  };
}
