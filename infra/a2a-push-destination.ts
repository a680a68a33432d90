/**
 * Where an A2A push notification may go, and the one POST that delivers it. A push URL comes from a caller, so it
 * is judged like http_request's destinations: every DNS answer public (or the host listed in A2A_PUSH_ALLOW_HOSTS),
 * the connection made to exactly the addresses judged (no second lookup to rebind), no redirect followed, a short
 * time limit. Plain http only to a listed host: a token never crosses the internet in clear text.
 */
import { isIP } from 'node:net';
import { vetDestination, systemResolve, type Resolve } from '../activities/tools/address-policy';
import { hostMatches, parseHostPattern } from '../activities/tools/host-patterns';
import { sendPinned, readCapped } from '../activities/tools/pinned-request';

const MAX_URL = 2_048;
const PUSH_TIMEOUT_MS = 10_000;

export type PushUrlVerdict = { ok: true; url: URL } | { ok: false; reason: string };

/** The URL's shape: absolute http(s), no user info, not too long; http only to a listed host. */
export function pushUrlShape(raw: string, allowHosts: readonly string[]): PushUrlVerdict {
  if (raw.length > MAX_URL) return { ok: false, reason: `the push URL is longer than ${MAX_URL} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'the push URL is not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { ok: false, reason: 'the push URL is https (or http to a host in A2A_PUSH_ALLOW_HOSTS)' };
  if (url.username || url.password)
    return { ok: false, reason: 'the push URL carries no user or password: send them as authentication' };
  if (url.protocol === 'http:' && !allowHosts.map(parseHostPattern).some((p) => hostMatches(p, url)))
    return {
      ok: false,
      reason: `plain http is refused for ${url.host}: use https, or list the host in A2A_PUSH_ALLOW_HOSTS`,
    };
  url.hash = '';
  return { ok: true, url };
}

/** The shape and every address the host resolves to. */
export async function vetPushUrl(
  raw: string,
  allowHosts: readonly string[],
  resolve: Resolve = systemResolve,
): Promise<{ ok: true; url: URL; addresses: string[] } | { ok: false; reason: string }> {
  const shape = pushUrlShape(raw, allowHosts);
  if (!shape.ok) return shape;
  let vetted;
  try {
    vetted = await vetDestination(shape.url, { allowHosts, denyHosts: [] }, resolve);
  } catch (error) {
    return { ok: false, reason: `the push URL's host does not resolve (${(error as Error).message})` };
  }
  if (!vetted.ok) {
    const host = shape.url.hostname;
    const what = vetted.reason.split('; http_request')[0];
    return {
      ok: false,
      reason: `${what}; pushes reach only public addresses unless A2A_PUSH_ALLOW_HOSTS lists the host (e.g. "${isIP(host) === 6 ? `[${host}]` : host}:${shape.url.port || (shape.url.protocol === 'https:' ? 443 : 80)}")`,
    };
  }
  return { ok: true, url: shape.url, addresses: vetted.addresses };
}

export class PushRefused extends Error {
  override name = 'PushRefused';
}

/** One POST of a push body; a non-2xx answer or a redirect is a failure (the caller's retries decide). */
export async function postPush(
  raw: string,
  allowHosts: readonly string[],
  headers: Record<string, string>,
  body: string,
): Promise<void> {
  const vetted = await vetPushUrl(raw, allowHosts);
  if (!vetted.ok) throw new PushRefused(vetted.reason);
  const response = await sendPinned(
    {
      url: vetted.url,
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      body,
    },
    vetted.addresses,
    AbortSignal.timeout(PUSH_TIMEOUT_MS),
  );
  const status = response.statusCode ?? 0;
  await readCapped(response, 4_096).catch(() => undefined);
  if (status < 200 || status > 299)
    throw new Error(
      `the push receiver at ${vetted.url.host} answered ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`,
    );
}
