/** The web chat platform: the page (static files) and its API under /api. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Hono } from 'hono';
import type { GatewayDeps } from '../platform';
import { connectUrl } from '../oauth/links';
import { webRoutes } from './routes';
import { WebSessions } from './sessions';

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

export function mountWeb(app: Hono, deps: GatewayDeps): void {
  const sessions = new WebSessions(deps.client, deps.config.temporal.taskQueue);
  app.route(
    '/api',
    webRoutes({
      sessions,
      identity: deps.config.web,
      temporalUiUrl: deps.config.temporal.uiUrl,
      namespace: deps.config.temporal.namespace,
      log: deps.log,
      credentials: deps.credentials,
      connectUrl: (userId, provider) =>
        connectUrl(deps.credentials(), deps.config.publicUrl, userId, provider),
    }),
  );
  for (const [route, file] of Object.entries(ASSETS)) {
    const body = readFileSync(path.join(STATIC_DIR, file), 'utf8');
    const type = TYPES[path.extname(file)]!;
    app.get(route, (c) => c.body(body, 200, { 'content-type': type, 'cache-control': 'no-cache' }));
  }
}
