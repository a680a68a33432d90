/**
 * Who is clicking in the web chat. Three modes, from the environment:
 * - WEB_TRUSTED_USER_HEADER: an authenticating reverse proxy sets this header; nothing else is believed.
 * - otherwise the page names its user (X-Agent-User header or ?user=), default "local": fine on
 *   localhost, which is where the gateway binds by default.
 * - WEB_AUTH_TOKEN additionally requires `Authorization: Bearer <token>` (or ?token= for live streams).
 */
import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { userIdSchema } from '../../common/ids';

export interface WebIdentityConfig {
  trustedUserHeader: string | undefined;
  authToken: string | undefined;
}

export type IdentityResult = { ok: true; userId: string } | { ok: false; status: 401 | 400; error: string };

export function identify(c: Context, config: WebIdentityConfig): IdentityResult {
  if (config.authToken) {
    const presented = c.req.header('authorization')?.replace(/^Bearer\s+/i, '') ?? c.req.query('token') ?? '';
    if (!sameSecret(presented, config.authToken))
      return { ok: false, status: 401, error: 'missing or wrong access token (WEB_AUTH_TOKEN)' };
  }
  const raw = config.trustedUserHeader
    ? c.req.header(config.trustedUserHeader)
    : (c.req.header('x-agent-user') ?? c.req.query('user') ?? 'local');
  if (!raw)
    return {
      ok: false,
      status: 401,
      error: `no user: the ${config.trustedUserHeader} header set by your proxy is missing`,
    };
  const parsed = userIdSchema.safeParse(raw);
  if (!parsed.success)
    return { ok: false, status: 400, error: `invalid user name: ${parsed.error.issues[0]?.message}` };
  return { ok: true, userId: parsed.data };
}

function sameSecret(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
