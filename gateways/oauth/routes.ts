/**
 * Sign-in endpoints. `GET /oauth/<provider>/start?ticket=…` checks the Connect link's signed ticket,
 * starts an OAuth flow (state: signed, expiring, single-use, bound to the person and to this browser by
 * a cookie; PKCE S256) and redirects to the provider — or shows the API key form. The callback exchanges
 * the code with openid-client, stores the tokens encrypted in the vault and signals every workflow of that
 * person waiting on that provider. Every failure gets an explanatory page and changes nothing.
 * Tokens, codes, verifiers and client secrets are never logged.
 *
 * Each route's work lives in its own module: start.ts (the Connect link and its confirmation page),
 * flow-start.ts (the redirect to the provider), callback.ts (the provider's answer), api-key.ts (the form).
 */
import { Hono } from 'hono';
import { saveApiKey } from './api-key';
import { finishSignIn } from './callback';
import type { OAuthRouteContext, OAuthRouteDeps } from './route-context';
import { begin, continueFromConfirmPage } from './start';

export type { OAuthRouteDeps } from './route-context';

export function oauthRoutes(deps: OAuthRouteDeps): Hono {
  const app = new Hono();
  const base = deps.publicUrl.replace(/\/$/, '');
  const ctx: OAuthRouteContext = { deps, base, secureCookie: base.startsWith('https://') };

  /**
   * GET: the Connect link. A chat link opened where no sign-in shows who opens it asks first (the page names
   * whose agent the account will serve); POST: the person's deliberate "continue" from that page.
   */
  app.get('/oauth/:provider/start', async (c) => await begin(ctx, c, c.req.query('ticket') ?? '', false));
  app.post('/oauth/:provider/start', async (c) => await continueFromConfirmPage(ctx, c));
  app.get('/oauth/:provider/callback', async (c) => await finishSignIn(ctx, c));
  app.post('/oauth/:provider/key', async (c) => await saveApiKey(ctx, c));

  return app;
}
