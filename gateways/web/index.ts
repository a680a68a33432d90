/** The web chat platform: the page (static files), its API under /api, and the sign-in routes. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Hono } from 'hono';
import type { GatewayDeps } from '../platform';
import { connectUrl } from '../oauth/links';
import { mountLogin } from './auth/login-routes';
import { refuseForeignHost } from './auth/request-guard';
import { openTokenLink } from './auth/token-link';
import { bundlePageScript } from './page-script';
import { webRoutes } from './routes';
import { agentCard } from '../a2a/agent-card';
import { a2aCard } from '../a2a/route';
import { a2aMissions } from '../a2a/mission-tasks';
import { mountTemporalUi } from './temporal-ui';
import { LiveViews } from './live-views';
import { SessionAccess } from './session-access';
import { Inbox } from './inbox';
import { Sessions, WEB_DEADLINE_MS } from '../sessions';
import { credentialTrail } from '../credential-trail';
import { modelLabels } from '../../infra/config';

const STATIC_DIR = path.join(__dirname, 'static');
const ASSETS: Record<string, string> = {
  '/': 'index.html',
  '/app.js': 'app.js',
  '/app.css': 'app.css',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};
/** The page never runs another origin's scripts, and no other site may frame it (clickjacking a button). */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

export function mountWeb(app: Hono, deps: GatewayDeps): void {
  if (!deps.config.web.enabled) return;
  const auth = deps.webAuth;
  const sessions = new Sessions(deps.client, deps.config.temporal.taskQueue, 'web', WEB_DEADLINE_MS);
  const live = new LiveViews(sessions, deps.log);
  // Set before the gateway cuts its open connections on shutdown: a stream ended by a deploy is not a person's Stop.
  let closing = false;
  deps.onClose(() => {
    closing = true;
    live.close();
  });
  // A2A: the agent card is public (a calling agent reads how to sign in from it); the endpoint is under /api.
  const card = agentCard(deps.config, auth);
  app.get('/.well-known/agent-card.json', a2aCard(card));
  app.route(
    '/api',
    webRoutes({
      sessions,
      credentialTrail: credentialTrail(deps.client, deps.config.temporal.taskQueue, deps.log),
      auth,
      access: new SessionAccess(deps.client, deps.config.policy),
      inbox: new Inbox(
        deps.client,
        deps.config.policy.users,
        () => deps.credentials().keys.signing,
        deps.log,
      ),
      live,
      streams: deps.streams,
      rate: deps.config.web.rate,
      aguiOrigins: deps.config.web.aguiOrigins,
      a2aCard: card,
      a2aPushHosts: {
        allowHosts: deps.config.web.a2aPushAllowHosts,
        denyHosts: deps.config.policy.denyHosts,
      },
      missions: a2aMissions(deps.client, deps.config),
      closing: () => closing,
      temporalUiUrl: deps.config.temporal.uiUrl,
      namespace: deps.config.temporal.namespace,
      demoModel: deps.config.model.provider === 'scripted',
      models: modelLabels(deps.config.model),
      log: deps.log,
      credentials: deps.credentials,
      connectUrl: (userId, provider, expiresAt) =>
        connectUrl(deps.credentials(), deps.config.publicUrl, userId, provider, {
          expiresAt,
          channel: 'web',
        }),
    }),
  );
  if (auth.mode === 'login') mountLogin(app, deps, auth);
  mountTemporalUi(app, deps);
  for (const [route, file] of Object.entries(ASSETS)) {
    const body = file === 'app.js' ? bundlePageScript() : readFileSync(path.join(STATIC_DIR, file), 'utf8');
    const type = TYPES[path.extname(file)]!;
    app.get(route, (c) => {
      const foreign = refuseForeignHost(c, auth);
      if (foreign) return c.text(foreign.error, foreign.status);
      // `/?token=<secret>` (the link `npm start` prints) is the one URL that takes the secret: it becomes
      // a session cookie and the address bar is cleaned, so the secret is not left in history or referrers.
      const token = route === '/' ? c.req.query('token') : undefined;
      if (token !== undefined) return openTokenLink(c, auth, token, '/', PAGE_HEADERS);
      return c.body(body, 200, { 'content-type': type, 'cache-control': 'no-cache', ...PAGE_HEADERS });
    });
  }
}
