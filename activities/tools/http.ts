/**
 * http_request: one request, safe by construction. Every hop (redirects are followed here, at most 5) is
 * checked against the address policy and connected to the addresses checked; a provider's credential is
 * attached per hop, only while the hop's host is one of the provider's `apiHosts`; the body is read as a
 * stream up to the cap; 30 s for the whole exchange.
 */
import type { ToolRunResult } from '../types';
import { vetDestination, type AddressPolicy, type Resolve } from './address-policy';
import { hostMatches, parseHostPattern } from './host-patterns';
import { OUTPUT_CAP } from './output-cap';
import { readCapped, sendPinned, type Hop } from './pinned-request';

export const MAX_REDIRECTS = 5;
const TIMEOUT_MS = 30_000;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers the tool sets itself, or that must not follow a request to another origin. */
const OWN_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);
const ORIGIN_BOUND = new Set(['authorization', 'cookie', 'proxy-authorization']);
const BODY_HEADERS = new Set(['content-type', 'content-encoding', 'content-language', 'content-location']);

/** The person's credential for a provider, as the header to send, and the hosts it may be sent to. */
export interface HttpCredential {
  provider: string;
  header: string;
  value: string;
  apiHosts: readonly string[];
}

export async function runHttpRequest(input: {
  method: string;
  url: string;
  headers?: Record<string, string> | undefined;
  body?: string | undefined;
  signal?: AbortSignal;
  policy?: AddressPolicy | undefined;
  credential?: HttpCredential | undefined;
  /** DNS; a parameter so tests can stand in for it. */
  resolve?: Resolve;
  cap?: number;
}): Promise<ToolRunResult> {
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  const signal = input.signal ? AbortSignal.any([timeout, input.signal]) : timeout;
  const policy = input.policy ?? { allowHosts: [], denyHosts: [] };
  const cap = input.cap ?? OUTPUT_CAP;
  let credential = input.credential;
  let hop: Hop = {
    url: new URL(input.url),
    method: input.method,
    headers: withoutOwnHeaders(input.headers ?? {}, credential?.header),
    body: input.method === 'GET' || input.method === 'HEAD' ? undefined : input.body,
  };
  if (credential && !sendsTo(credential, hop.url))
    return { status: 'error', content: outsideApiHosts(credential, hop.url) };
  try {
    for (let redirects = 0; ; redirects++) {
      if (hop.url.protocol !== 'http:' && hop.url.protocol !== 'https:')
        return { status: 'error', content: `refused: ${hop.url.protocol} is not http or https (${hop.url})` };
      const vetted = await abortable(vetDestination(hop.url, policy, input.resolve), signal);
      if (!vetted.ok) return { status: 'error', content: `refused: ${hop.url.origin}: ${vetted.reason}.` };
      // The last moment before sending: once a hop leaves the provider's hosts the credential is gone for good.
      if (credential && !sendsTo(credential, hop.url)) credential = undefined;
      const sent = credential ? { ...hop.headers, [credential.header]: credential.value } : hop.headers;
      const response = await sendPinned({ ...hop, headers: sent }, vetted.addresses, signal);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (!REDIRECTS.has(status) || !location) {
        const body = await readCapped(response, hop.method === 'HEAD' ? 0 : cap);
        const lines = [
          `HTTP ${status} ${response.statusMessage ?? ''}`,
          ...(redirects ? [`url: ${hop.url}`] : []),
          `content-type: ${response.headers['content-type'] ?? 'unknown'}`,
        ];
        const cut = body.truncated && hop.method !== 'HEAD' ? `\n…(truncated at ${cap} bytes)` : '';
        return {
          status: status >= 200 && status < 300 ? 'ok' : 'error',
          content: `${lines.join('\n')}\n\n${body.text}${cut}`,
        };
      }
      response.destroy();
      if (redirects === MAX_REDIRECTS)
        return {
          status: 'error',
          content: `refused: more than ${MAX_REDIRECTS} redirects (the last to ${location})`,
        };
      const next = nextHop(hop, status, location);
      if (credential && hop.url.protocol === 'https:' && next.url.protocol === 'http:')
        credential = undefined;
      hop = next;
    }
  } catch (error) {
    const reason = timeout.aborted
      ? `no answer within ${TIMEOUT_MS / 1000} s`
      : input.signal?.aborted
        ? 'cancelled'
        : (error as Error).message;
    return { status: 'error', content: `request failed: ${reason}` };
  }
}

/** The next request after a redirect, as browsers make it (fetch standard, "HTTP-redirect fetch"). */
function nextHop(hop: Hop, status: number, location: string): Hop {
  const url = new URL(location, hop.url);
  const toGet =
    (status === 303 && hop.method !== 'HEAD') ||
    ((status === 301 || status === 302) && hop.method === 'POST');
  const crossOrigin = url.origin !== hop.url.origin;
  const headers = Object.fromEntries(
    Object.entries(hop.headers).filter(
      ([name]) =>
        !(toGet && BODY_HEADERS.has(name.toLowerCase())) &&
        !(crossOrigin && ORIGIN_BOUND.has(name.toLowerCase())),
    ),
  );
  return { url, method: toGet ? 'GET' : hop.method, headers, body: toGet ? undefined : hop.body };
}

function withoutOwnHeaders(headers: Record<string, string>, credentialHeader: string | undefined) {
  // The credential wins over any header of the same name the model wrote, on every hop.
  const kept = Object.entries(headers).filter(
    ([name]) =>
      !OWN_HEADERS.has(name.toLowerCase()) && name.toLowerCase() !== credentialHeader?.toLowerCase(),
  );
  const names = new Set(kept.map(([name]) => name.toLowerCase()));
  return {
    ...(names.has('user-agent') ? {} : { 'User-Agent': 'durable-agent-runtime' }),
    ...(names.has('accept') ? {} : { Accept: '*/*' }),
    ...Object.fromEntries(kept),
  };
}

const sendsTo = (credential: HttpCredential, url: URL) =>
  credential.apiHosts.some((host) => hostMatches(parseHostPattern(host), url));

function outsideApiHosts(credential: HttpCredential, url: URL): string {
  if (credential.apiHosts.length === 0)
    return `refused: the provider "${credential.provider}" declares no "apiHosts", so its credential is never sent; add "apiHosts": ["<host>"] to providers.${credential.provider} in the policy file.`;
  return `refused: the ${credential.provider} credential is sent only to ${credential.apiHosts.join(', ')}; ${url.host} is not one of them (nothing was sent).`;
}

async function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
