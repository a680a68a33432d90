/** Where a request comes from and which names this gateway answers to (DNS-rebinding and proxy checks). */
import { BlockList, isIP } from 'node:net';
import type { Context } from 'hono';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/** The peer's address as the socket saw it (IPv4-mapped IPv6 written as IPv4), or undefined off Node. */
export function remoteAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  const raw = env?.incoming?.socket?.remoteAddress;
  return raw?.startsWith('::ffff:') && isIP(raw.slice(7)) === 4 ? raw.slice(7) : raw;
}

/** A list of CIDRs and single addresses, e.g. "10.0.0.0/8, ::1". */
export function addressList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const type = isIP(address ?? '');
    if (!address || type === 0)
      throw new Error(`"${entry}" is not an address or CIDR (e.g. 10.0.0.5/32 or fd00::/8)`);
    const family = type === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, family);
    else {
      const prefix = Number(bits);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > (type === 4 ? 32 : 128))
        throw new Error(`"${entry}" has an invalid prefix length`);
      list.addSubnet(address, prefix, family);
    }
  }
  return list;
}

export function listed(list: BlockList, address: string | undefined): boolean {
  if (!address) return false;
  const type = isIP(address);
  return type !== 0 && list.check(address, type === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The Host names (and matching Origins) this gateway answers to: PUBLIC_URL's, plus the loopback names on
 * its port when it listens on loopback. Anything else is a DNS-rebinding attempt or a misconfiguration.
 */
export function servedNames(publicUrl: string, bindHost: string, port: number) {
  const url = new URL(publicUrl);
  const hosts = new Set([url.host.toLowerCase()]);
  const origins = new Set([url.origin.toLowerCase()]);
  if (isLoopbackHost(bindHost))
    for (const name of LOOPBACK_NAMES) {
      hosts.add(`${name}:${port}`);
      origins.add(`http://${name}:${port}`);
    }
  return { hosts, origins };
}
