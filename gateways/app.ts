/** The gateway's HTTP app: health endpoints plus every registered platform. */
import { Hono } from 'hono';
import { isTemporalNotAnswering } from '../infra/temporal/deadline';
import { bodyLimits } from './body-limits';
import type { GatewayDeps } from './platform';
import { ReadinessProbe } from './readiness';
import { platforms } from './registry';
import { mountStreamEndpoint } from './stream-hub';

export function createGatewayApp(deps: GatewayDeps): Hono {
  const app = new Hono();
  app.use('*', bodyLimits());
  app.get('/healthz', (c) => c.json({ ok: true }));
  const readiness = new ReadinessProbe(deps.client);
  app.get('/readyz', async (c) => {
    const ready = await readiness.check();
    return ready.ok ? c.json({ ok: true, temporal: 'ready' }) : c.json(ready, 503);
  });
  mountStreamEndpoint(app, deps.streams, deps.config.stream.token);
  for (const platform of platforms) platform.mount(app, deps);
  app.onError((error, c) => {
    if (isTemporalNotAnswering(error)) {
      deps.log.warn('Temporal did not answer', { path: c.req.path, error: error.message });
      return c.json(
        { error: "The agent's server (Temporal) is not answering right now. Try again in a moment." },
        503,
      );
    }
    deps.log.error('request failed', { path: c.req.path, error: error.message });
    return c.json({ error: 'internal error; see the gateway log' }, 500);
  });
  return app;
}
