/**
 * The embedded Temporal UI behind the chat's own door (TEMPORAL_UI=gateway, the default of `npm start`). The UI
 * itself answers any Host and accepts signals with a script-readable CSRF cookie, so a DNS-rebinding page could
 * read every conversation and approve gates through it; here it is reached only through the gateway, with the
 * same Host check, the same sign-in (the printed link opens both) and an Origin check on every change. Its own
 * port is on loopback and one browsers refuse to load (config.ts BROWSER_REFUSED_PORT).
 *
 * It shows every conversation and can signal any of them: in local mode that is the one person at the machine;
 * with several people (proxy or login mode) only those named in TEMPORAL_UI_USERS may open it.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import type { Context, Hono } from 'hono';
import { TEMPORAL_UI_PATH } from '../../infra/config';
import type { GatewayDeps } from '../platform';
import { outcomePage } from '../oauth/pages';
import { refuseForeignHost } from './auth/request-guard';
import { openTokenLink } from './auth/token-link';
import type { WebAuth } from './auth/web-auth';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Headers that belong to one hop, or to this gateway's own sign-in: never passed to the UI. */
const DROPPED_REQUEST_HEADERS = ['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'authorization'];
const DROPPED_RESPONSE_HEADERS = ['connection', 'keep-alive', 'transfer-encoding'];

export function mountTemporalUi(app: Hono, deps: GatewayDeps): void {
  const { config } = deps;
  const { ui, address, uiUpstream } = config.temporal;
  // The embedded server's UI, or one you run (compose): served here only, behind this door.
  if (ui !== 'gateway' || (address && !uiUpstream) || !config.web.enabled) return;
  const upstream = new URL(uiUpstream ?? `http://127.0.0.1:${config.temporal.uiPort}`);
  const auth = deps.webAuth;
  const handler = async (c: Context) => {
    const refused = refuse(c, auth, config.temporal.uiUsers);
    if (refused) return refused;
    return await forward(c, upstream, auth.cookieName);
  };
  app.all(TEMPORAL_UI_PATH, (c) => c.redirect(`${TEMPORAL_UI_PATH}/`, 302));
  app.all(`${TEMPORAL_UI_PATH}/*`, handler);
}

function refuse(c: Context, auth: WebAuth, uiUsers: readonly string[]): Response | undefined {
  const foreign = refuseForeignHost(c, auth);
  if (foreign) return c.text(foreign.error, foreign.status);
  // `/temporal/?token=<secret>`: the printed link, as `/?token=` for the chat (the secret becomes the cookie).
  const token = c.req.path === `${TEMPORAL_UI_PATH}/` ? c.req.query('token') : undefined;
  if (token !== undefined && auth.mode === 'local')
    return openTokenLink(c, auth, token, `${TEMPORAL_UI_PATH}/`);
  const who = auth.identify(c);
  if (!who.ok)
    return c.html(
      outcomePage(
        'bad',
        'Sign in first',
        auth.mode === 'local'
          ? 'Open the Temporal UI link printed when the agent started (or the chat link, then come back).'
          : `Sign in to the chat first (${who.error}).`,
      ),
      who.status,
    );
  if (auth.mode !== 'local' && !uiUsers.includes(who.caller.userId))
    return c.html(
      outcomePage(
        'bad',
        'Not for you',
        `The Temporal UI shows and can signal every conversation: only the people in TEMPORAL_UI_USERS may open it, and @${who.caller.userId} is not one of them.`,
      ),
      403,
    );
  if (!SAFE_METHODS.has(c.req.method)) {
    // A change must come from this gateway's own pages (the UI's), never from another site.
    const origin = c.req.header('origin')?.toLowerCase();
    if (origin === undefined ? who.caller.via === 'cookie' : !auth.served.origins.has(origin))
      return c.text('cross-site request refused', 403);
  }
  return undefined;
}

/**
 * The UI's content security policy. Its pages need inline scripts and styles (SvelteKit), so the policy cannot stop
 * an injected script from running; it stops it from reaching anything: requests go only to the UI's own path and
 * the codec (a host source without a scheme matches the page's own), images and fonts only from here.
 */
export function temporalUiPolicy(host: string): string {
  return [
    "default-src 'self'",
    "script-src 'self' 'unsafe-inline'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src ${host}${TEMPORAL_UI_PATH}/ ${host}/codec/`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Passes the request on with node:http: fetch would refuse the UI's port, for the very reason it was chosen
 * (the Fetch standard's bad ports).
 */
async function forward(c: Context, upstream: URL, ownCookie: string): Promise<Response> {
  const url = new URL(c.req.url);
  const headers: Record<string, string> = {};
  c.req.raw.headers.forEach((value, name) => {
    if (!DROPPED_REQUEST_HEADERS.includes(name)) headers[name] = value;
  });
  // The chat's session cookie is this gateway's: the UI gets only its own cookies (its CSRF token).
  const cookies = (headers.cookie ?? '')
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part && !part.startsWith(`${ownCookie}=`));
  if (cookies.length) headers.cookie = cookies.join('; ');
  else delete headers.cookie;
  headers.host = upstream.host;
  const body = SAFE_METHODS.has(c.req.method) ? undefined : Buffer.from(await c.req.arrayBuffer());
  try {
    const reply = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = (upstream.protocol === 'https:' ? https : http).request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: c.req.method,
          path: `${url.pathname}${url.search}`,
          headers,
        },
        resolve,
      );
      request.on('error', reject);
      request.end(body);
    });
    const out = new Headers();
    for (const [name, value] of Object.entries(reply.headers)) {
      if (value === undefined || DROPPED_RESPONSE_HEADERS.includes(name)) continue;
      for (const item of Array.isArray(value) ? value : [value]) out.append(name, item);
    }
    // The UI now shares the chat's origin: no other site may frame it (clickjacking a signal button), and what
    // runs in it reaches only its own API and the codec, never the chat's (`/api`) nor another site.
    out.set('x-frame-options', 'DENY');
    out.append('content-security-policy', temporalUiPolicy(c.req.header('host') ?? ''));
    const status = reply.statusCode ?? 502;
    const stream = status === 204 || status === 304 || c.req.method === 'HEAD' ? null : Readable.toWeb(reply);
    if (!stream) reply.resume();
    return new Response(stream as ReadableStream | null, { status, headers: out });
  } catch (error) {
    return c.text(`the Temporal UI is not reachable (${(error as Error).message})`, 502);
  }
}
