/**
 * Host patterns of the policy file (`allowHosts`, `denyHosts`) and of providers (`apiHosts`): a host name
 * (`api.github.com`), a wildcard for its subdomains (`*.githubusercontent.com`: any depth, not the name
 * itself), an IP address (`127.0.0.1`, `::1`) or a CIDR (`10.0.0.0/8`, `fd00::/8`); names and addresses
 * may end in a port (`127.0.0.1:8080`, `[::1]:8080`, `intranet.example:8443`) to match that port only.
 */
import { isIP } from 'node:net';
import { inCidr, ipBytes, parseCidr, type Cidr, type IpBytes } from './ip-ranges';

export interface HostPattern {
  text: string;
  /** Matches this port only. */
  port: number | undefined;
  /** An address or CIDR pattern. */
  cidr: Cidr | undefined;
  /** A lower-case host name, or its suffix with the dot (`.example.com`) for a `*.` wildcard. */
  name: string | undefined;
  wildcard: boolean;
}

/** The host of a URL as patterns see it: lower case, no brackets, no trailing dot. */
export const normalHost = (hostname: string) =>
  hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();

export const effectivePort = (url: URL) => Number(url.port || (url.protocol === 'https:' ? 443 : 80));

export function parseHostPattern(text: string): HostPattern {
  const trimmed = text.trim();
  let host = trimmed;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(trimmed);
  const withPort = /^([^:]+):(\d{1,5})$/.exec(trimmed);
  if (bracketed) [host, port] = [bracketed[1]!, bracketed[2] ? Number(bracketed[2]) : undefined];
  else if (withPort) [host, port] = [withPort[1]!, Number(withPort[2])];
  const cidr = parseCidr(host);
  if (cidr) return { text: trimmed, port, cidr, name: undefined, wildcard: false };
  const name = normalHost(host);
  const wildcard = name.startsWith('*.');
  return { text: trimmed, port, cidr: undefined, name: wildcard ? name.slice(1) : name, wildcard };
}

const portMatches = (pattern: HostPattern, port: number) =>
  pattern.port === undefined || pattern.port === port;

/** Does the URL's host (a name or an IP literal) match? Addresses a name resolves to are matched apart. */
export function hostMatches(pattern: HostPattern, url: URL): boolean {
  if (!portMatches(pattern, effectivePort(url))) return false;
  const host = normalHost(url.hostname);
  if (pattern.cidr) {
    const bytes = isIP(host) ? ipBytes(host) : undefined;
    return !!bytes && inCidr(bytes, pattern.cidr);
  }
  if (pattern.wildcard) return host.endsWith(pattern.name!) && host.length > pattern.name!.length;
  return host === pattern.name;
}

/** Does a resolved address (or the IPv4 address it embeds) fall in the pattern's address or CIDR? */
export function addressMatches(pattern: HostPattern, port: number, ...forms: IpBytes[]): boolean {
  return !!pattern.cidr && portMatches(pattern, port) && forms.some((bytes) => inCidr(bytes, pattern.cidr!));
}
