/** The gateway's HTTP app: health endpoints plus every registered platform. */
import { Hono } from 'hono';
import { bodyLimits } from './body-limits';
import type { GatewayDeps } from './platform';
import { platforms } from './registry';
import { mountStreamEndpoint } from './stream-hub';

export function createGatewayApp(deps: GatewayDeps): Hono {
  const app = new Hono();
  app.use('*', bodyLimits());
  app.get('/healthz', (c) => c.json({ ok: true }));
  app.get('/readyz', async (c) => {
    try {
      await deps.client.withDeadline(Date.now() + 2_000, () => deps.client.workflowService.getSystemInfo({}));
      return c.json({ ok: true, temporal: 'reachable' });
    } catch (error) {
      return c.json({ ok: false, temporal: `unreachable: ${(error as Error).message}` }, 503);
    }
  });
  mountStreamEndpoint(app, deps.streams, deps.config.stream.token);
  for (const platform of platforms) platform.mount(app, deps);
  app.onError((error, c) => {
    deps.log.error('request failed', { path: c.req.path, error: error.message });
    return c.json({ error: 'internal error; see the gateway log' }, 500);
  });
  return app;
}
