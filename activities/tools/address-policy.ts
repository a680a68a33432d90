/**
 * May http_request reach this URL? The host is resolved here (every DNS answer), each address is judged,
 * and the request then connects to exactly these addresses: a DNS answer that changes between this check
 * and the connection never counts. The policy file's `denyHosts` always wins; `allowHosts` opens
 * addresses that are not public (an intranet, a local test server).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import {
  addressMatches,
  effectivePort,
  hostMatches,
  normalHost,
  parseHostPattern,
  type HostPattern,
} from './host-patterns';
import { embeddedIPv4, ipBytes, isMetadata, specialUse } from './ip-ranges';

export interface AddressPolicy {
  allowHosts: readonly string[];
  denyHosts: readonly string[];
}

/** Every address a host name resolves to. A parameter so tests can stand in for DNS. */
export type Resolve = (hostname: string) => Promise<string[]>;

export const systemResolve: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((answer) => answer.address);

/** Names of metadata services that are refused by name, whatever they resolve to. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);

export type Vetted = { ok: true; addresses: string[] } | { ok: false; reason: string };

export async function vetDestination(
  url: URL,
  policy: AddressPolicy,
  resolve: Resolve = systemResolve,
): Promise<Vetted> {
  const allow = policy.allowHosts.map(parseHostPattern);
  const deny = policy.denyHosts.map(parseHostPattern);
  const host = normalHost(url.hostname);
  const port = effectivePort(url);
  const denied = deny.find((pattern) => hostMatches(pattern, url));
  if (denied) return { ok: false, reason: `${host} is in "denyHosts" (${denied.text})` };
  const nameAllowed = !isIP(host) && allow.some((pattern) => hostMatches(pattern, url));
  if (METADATA_NAMES.has(host) && !nameAllowed)
    return { ok: false, reason: `${host} is a cloud metadata service${howToAllow(host, port)}` };

  // A name that does not resolve is a failed request (thrown), not a refusal.
  const addresses = isIP(host) ? [host] : await resolve(host);
  if (addresses.length === 0) throw new Error(`${host} has no addresses`);
  for (const address of addresses) {
    const refusal = judge(address, { host, port, nameAllowed, allow, deny });
    if (refusal) return { ok: false, reason: refusal };
  }
  return { ok: true, addresses };
}

function judge(
  address: string,
  context: { host: string; port: number; nameAllowed: boolean; allow: HostPattern[]; deny: HostPattern[] },
): string | undefined {
  const { host, port } = context;
  const bytes = ipBytes(address);
  const where = host === address ? address : `${host} resolves to ${address}, which`;
  if (!bytes) return `${where} is not an IP address`;
  const inner = embeddedIPv4(bytes);
  const forms = inner ? [bytes, inner] : [bytes];
  const denied = context.deny.find((pattern) => addressMatches(pattern, port, ...forms));
  if (denied) return `${where} is in "denyHosts" (${denied.text})`;
  const special = specialUse(bytes);
  if (!special) return undefined;
  // A metadata endpoint opens only by its own exact address, never by a name or a wider CIDR.
  const exact = context.allow.some(
    (pattern) =>
      addressMatches(pattern, port, ...forms) && pattern.cidr!.bits === pattern.cidr!.bytes.length * 8,
  );
  if (isMetadata(bytes) || forms.some(isMetadata))
    return exact
      ? undefined
      : `${where} is not public (${special}); only its exact address in "allowHosts" opens it`;
  const allowed =
    context.nameAllowed || context.allow.some((pattern) => addressMatches(pattern, port, ...forms));
  return allowed ? undefined : `${where} is not public (${special})${howToAllow(host, port)}`;
}

const howToAllow = (host: string, port: number) =>
  `; http_request reaches only public addresses unless "allowHosts" in the policy file lists the host ` +
  `(e.g. "${isIP(host) === 6 ? `[${host}]` : host}:${port}") or its CIDR`;
