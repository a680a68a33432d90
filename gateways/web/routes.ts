/**
 * The web chat's JSON API and live stream. Stateless: every request authenticates, validates with the
 * contract's schemas, and signals or queries Temporal. Nothing pending lives here.
 *
 * This module is the map: the guard and every route in registration order. Each route's work lives with its
 * job: session-routes.ts, message-route.ts, stream-route.ts, signal-routes.ts, grant-routes.ts,
 * credential-routes.ts, inbox-routes.ts, inbox-stream-route.ts, conversation-routes.ts; what they share is in api-context.ts.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { temporalUiLink } from '../../common/ids';
import { refuseCrossSite, refuseForeignHost } from './auth/request-guard';
import { RateLimiter } from './auth/rate-limit';
import type { ApiEnv, WebApi } from './api-context';
import type { WebRouteDeps } from './route-deps';
import { showConversation } from './conversation-routes';
import { disconnectCredential, listCredentials } from './credential-routes';
import { listGrants, revokeGrant } from './grant-routes';
import { InboxFeeds } from './inbox-feed';
import { answerFromInbox, decideFromInbox, listInbox } from './inbox-routes';
import { mountInboxStream } from './inbox-stream-route';
import { postMessage } from './message-route';
import { createSession, listSessions, showSession, viewFor } from './session-routes';
import { forkSession, listForks } from './fork-routes';
import { archiveSession, postAnswers, postDecision, stopTurn, tryModelNow } from './signal-routes';
import { mountStream } from './stream-route';
import { aguiCors, aguiCorsHeaders, aguiRun } from '../agui/route';
import { a2aRpc } from '../a2a/route';

export type { WebRouteDeps } from './route-deps';

/** A person's inbox reads and decisions a minute, per gateway: a page, "Show more" and batches, never a flood. */
const INBOX_REQUESTS_PER_MINUTE = 120;

export function webRoutes(deps: WebRouteDeps): Hono<{ Variables: { userId: string } }> {
  const app = new Hono<ApiEnv>();
  const api: WebApi = {
    deps,
    link: (workflowId) => temporalUiLink(deps.temporalUiUrl, deps.namespace, workflowId),
    messageRate: new RateLimiter(deps.rate.messagesPerMinute),
    sessionRate: new RateLimiter(deps.rate.sessionsPerMinute),
    inboxRate: new RateLimiter(INBOX_REQUESTS_PER_MINUTE),
    inboxFeeds: new InboxFeeds(deps.inbox, deps.log),
  };

  // Order matters: the host and the caller are known before the body is read, the body is bounded before
  // it is parsed, and nothing unauthenticated reaches Temporal.
  // An AG-UI front end served elsewhere asks first (CORS preflight, no credentials): answered for allowed origins only.
  app.options('/agui', (c) => aguiCors(c, deps.aguiOrigins));
  // Its refusals too (401, 403, 429) carry the CORS headers, so an allowed front end can read why.
  app.use('/agui', aguiCorsHeaders(deps.aguiOrigins));
  app.use('*', guard(deps));

  app.get('/me', (c) =>
    c.json({
      userId: c.get('userId'),
      mode: deps.auth.mode,
      temporalUiUrl: deps.temporalUiUrl ?? null,
      namespace: deps.namespace,
      demoModel: deps.demoModel,
      models: deps.models,
    }),
  );
  app.get('/credentials', (c) => listCredentials(api, c));
  app.delete('/credentials/:provider', (c) => disconnectCredential(api, c));
  app.get('/sessions', (c) => listSessions(api, c));
  app.post('/sessions', (c) => createSession(api, c));
  app.post('/sessions/:id/messages', (c) => postMessage(api, c));
  app.get('/sessions/:id', (c) => showSession(api, c));
  mountStream(app, deps, viewFor(api));
  app.post('/decisions', (c) => postDecision(api, c));
  app.post('/sessions/:id/stop', (c) => stopTurn(api, c));
  app.post('/sessions/:id/try-model-now', (c) => tryModelNow(api, c));
  app.post('/sessions/:id/archive', (c) => archiveSession(api, c));
  app.post('/sessions/:id/fork', (c) => forkSession(api, c));
  app.get('/sessions/:id/forks', (c) => listForks(api, c));
  app.post('/answers', (c) => postAnswers(api, c));
  app.get('/conversations/:workflowId', (c) => showConversation(api, c));
  app.get('/inbox', (c) => listInbox(api, c));
  mountInboxStream(app, api);
  app.post('/inbox/decisions', (c) => decideFromInbox(api, c));
  app.post('/inbox/answers', (c) => answerFromInbox(api, c));
  app.get('/grants', (c) => listGrants(api, c));
  app.post('/grants/revoke', (c) => revokeGrant(api, c));
  app.post('/agui', aguiRun(api));
  app.post('/a2a', a2aRpc(api, deps.a2aCard));

  return app;
}

/** Refuses a foreign host, an unknown caller and a cross-site request, in that order; then sets the caller. */
function guard(deps: WebRouteDeps): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const foreign = refuseForeignHost(c, deps.auth);
    if (foreign) return c.json({ error: foreign.error }, foreign.status);
    const who = deps.auth.identify(c);
    if (!who.ok)
      return c.json(
        { error: who.error, ...(deps.auth.mode === 'login' ? { signIn: '/auth/login' } : {}) },
        who.status,
      );
    const crossSite = refuseCrossSite(
      c,
      deps.auth,
      who.caller,
      c.req.path === '/api/agui' ? deps.aguiOrigins : [],
    );
    if (crossSite) return c.json({ error: crossSite.error }, crossSite.status);
    c.set('userId', who.caller.userId);
    await next();
  };
}
