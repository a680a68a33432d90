/** Sign-ins for credential gates: /oauth/<provider>/start, /callback and /key. */
import { startResumeSweep } from './resume-sweep';
import type { Hono } from 'hono';
import type { GatewayDeps } from '../platform';
import { oauthRoutes } from './routes';
import { credentialTrail } from '../credential-trail';

export function mountOAuth(app: Hono, deps: GatewayDeps): void {
  app.route(
    '/',
    oauthRoutes({
      credentials: deps.credentials,
      client: deps.client,
      publicUrl: deps.config.publicUrl,
      webAuth: deps.webAuth,
      users: deps.config.policy.users,
      log: deps.log,
      credentialTrail: credentialTrail(deps.client, deps.config.temporal.taskQueue, deps.log),
    }),
  );
  deps.onClose(
    startResumeSweep(deps.client, deps.credentials, deps.log, deps.config.credentialSweepIntervalMs),
  );
}
