/**
 * Cross-site and DNS-rebinding defences for the web chat, before anything is parsed:
 * - the Host must be a name this gateway serves (a rebinding page reaches us under its own name);
 * - state-changing requests must be JSON (a cross-site form or `no-cors` fetch cannot send that without a
 *   CORS preflight, which is never granted), and when a browser says where it comes from (`Origin`), it
 *   must be this gateway; a request authenticated by cookie must say so.
 */
import type { Context } from 'hono';
import type { WebAuth, WebCaller } from './web-auth';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export type Refusal = { status: 400 | 403 | 415; error: string };

export function refuseForeignHost(c: Context, auth: WebAuth): Refusal | undefined {
  const host = (c.req.header('host') ?? '').toLowerCase();
  if (auth.served.hosts.has(host)) return undefined;
  return {
    status: 403,
    error: `this gateway does not answer to the host "${host.slice(0, 100)}": open it at ${[...auth.served.origins][0]} (or set PUBLIC_URL to the address people use)`,
  };
}

export function refuseCrossSite(
  c: Context,
  auth: WebAuth,
  caller: WebCaller | undefined,
  /** Other origins this route answers (CORS; the AG-UI endpoint's AGUI_ALLOWED_ORIGINS). */
  alsoAllowed: readonly string[] = [],
): Refusal | undefined {
  if (SAFE_METHODS.has(c.req.method)) return undefined;
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json')
    return { status: 415, error: 'send the request body as JSON (Content-Type: application/json)' };
  const origin = c.req.header('origin')?.toLowerCase();
  if (origin !== undefined && !auth.served.origins.has(origin) && !alsoAllowed.includes(origin))
    return { status: 403, error: 'cross-site request refused' };
  if (origin === undefined && caller?.via === 'cookie')
    return { status: 403, error: 'a browser request must say where it comes from (Origin)' };
  return undefined;
}
