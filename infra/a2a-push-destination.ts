/**
 * Where an A2A push notification may go, and the one POST that delivers it. A push URL comes from a caller, so it
 * is judged like http_request's destinations: every DNS answer public (or the host listed in A2A_PUSH_ALLOW_HOSTS),
 * never a host the policy's `denyHosts` names, the connection made to exactly the addresses judged (no second
 * lookup to rebind), no redirect followed, a short time limit. Plain http only to a listed host: a token never
 * crosses the internet in clear text.
 */
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { vetDestination, type Resolve } from '../activities/tools/address-policy';
import { hostMatches, parseHostPattern } from '../activities/tools/host-patterns';
import { sendPinned, readCapped } from '../activities/tools/pinned-request';

const MAX_URL = 2_048;
const PUSH_TIMEOUT_MS = 10_000;

export type PushUrlVerdict = { ok: true; url: URL } | { ok: false; reason: string };

/** Where pushes may go: non-public hosts listed (A2A_PUSH_ALLOW_HOSTS), and the policy's `denyHosts`, which always win. */
export interface PushHosts {
  allowHosts: readonly string[];
  denyHosts: readonly string[];
}

/**
 * DNS with a time limit, asked by the resolver library (not the thread pool `dns.lookup` queues on): a caller's host
 * whose name server never answers costs a few seconds, never the process's worker threads.
 */
const pushResolve: Resolve = async (hostname) => {
  const resolver = new Resolver({ timeout: 2_000, tries: 2 });
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
  const addresses = [
    ...(v4.status === 'fulfilled' ? v4.value : []),
    ...(v6.status === 'fulfilled' ? v6.value : []),
  ];
  if (addresses.length) return addresses;
  const failed = [v4, v6].find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
  const code = (failed?.reason as { code?: string } | undefined)?.code;
  throw Object.assign(new Error(`${hostname} has no addresses (${code ?? 'no answer'})`), { code });
};
/** Answers that say the name may resolve later: a push is owed, not refused. */
const TRANSIENT_DNS = new Set(['ETIMEOUT', 'ESERVFAIL', 'ECONNREFUSED', 'EAI_AGAIN', 'ECANCELLED']);

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
  url.hash = '';
  if (url.href.length > MAX_URL)
    return { ok: false, reason: `the push URL is longer than ${MAX_URL} characters once normalised` };
  if (url.protocol === 'http:' && !allowHosts.map(parseHostPattern).some((p) => hostMatches(p, url)))
    return {
      ok: false,
      reason: `plain http is refused for ${url.host}: use https, or list the host in A2A_PUSH_ALLOW_HOSTS`,
    };
  return { ok: true, url };
}

/**
 * The shape and every address the host resolves to. What DNS said stays in `detail` (for the log): a caller is told
 * only that the host is refused, so the check is no map of internal names. `transient`: DNS did not answer now.
 */
export async function vetPushUrl(
  raw: string,
  hosts: PushHosts,
  resolve: Resolve = pushResolve,
): Promise<
  | { ok: true; url: URL; addresses: string[] }
  | { ok: false; reason: string; detail?: string; transient?: true }
> {
  const shape = pushUrlShape(raw, hosts.allowHosts);
  if (!shape.ok) return shape;
  const host = shape.url.hostname;
  const example = `${isIP(host) === 6 ? `[${host}]` : host}:${shape.url.port || (shape.url.protocol === 'https:' ? 443 : 80)}`;
  const refused = `the push URL's host is refused: pushes reach public addresses (and hosts A2A_PUSH_ALLOW_HOSTS lists, e.g. "${example}"), never hosts the policy denies`;
  let vetted;
  try {
    vetted = await vetDestination(shape.url, hosts, resolve);
  } catch (error) {
    const code = (error as { code?: string }).code;
    return {
      ok: false,
      reason: refused,
      detail: (error as Error).message,
      ...(code && TRANSIENT_DNS.has(code) ? { transient: true as const } : {}),
    };
  }
  if (!vetted.ok) return { ok: false, reason: refused, detail: vetted.reason };
  return { ok: true, url: shape.url, addresses: vetted.addresses };
}

export class PushRefused extends Error {
  override name = 'PushRefused';
}

/** One POST of a push body; a non-2xx answer or a redirect is a failure (the caller's retries decide). */
export async function postPush(
  raw: string,
  hosts: PushHosts,
  headers: Record<string, string>,
  body: string,
): Promise<void> {
  const vetted = await vetPushUrl(raw, hosts);
  if (!vetted.ok && vetted.transient) throw new Error(`${vetted.reason} (${vetted.detail ?? 'no answer'})`);
  if (!vetted.ok) throw new PushRefused(`${vetted.reason} (${vetted.detail ?? ''})`);
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
