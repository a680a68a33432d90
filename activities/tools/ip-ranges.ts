/**
 * Which IP addresses http_request refuses unless the policy allows them: every address that is not
 * public unicast (IANA special-purpose registries, RFC 6890), and cloud metadata endpoints. IPv6 forms
 * that carry an IPv4 address (mapped, NAT64, 6to4) are judged by that IPv4 address too.
 */
import { isIP } from 'node:net';

export type IpBytes = Uint8Array;

/** The 4 or 16 bytes of an IP address in canonical text form (what `URL` and DNS give), or undefined. */
export function ipBytes(address: string): IpBytes | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return Uint8Array.from(bare.split('.').map(Number));
  if (family !== 6) return undefined;
  let text = bare;
  const tail: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    text = `${dotted[1]}0:0`;
    tail.push(...dotted[2]!.split('.').map(Number));
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = groups(head);
  const right = groups(rest);
  const words = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  words.forEach((word, i) => {
    bytes[2 * i] = word >> 8;
    bytes[2 * i + 1] = word & 0xff;
  });
  if (tail.length) bytes.set(tail, 12);
  return bytes;
}

export interface Cidr {
  bytes: IpBytes;
  bits: number;
}

/** `10.0.0.0/8`, `fd00::/8`, or a single address (its full length). */
export function parseCidr(text: string): Cidr | undefined {
  const [address, bits] = text.split('/') as [string, string | undefined];
  const bytes = ipBytes(address);
  if (!bytes) return undefined;
  const max = bytes.length * 8;
  if (bits === undefined) return { bytes, bits: max };
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return undefined;
  return { bytes, bits: Number(bits) };
}

export function inCidr(address: IpBytes, cidr: Cidr): boolean {
  if (address.length !== cidr.bytes.length) return false;
  for (let bit = 0; bit < cidr.bits; bit += 8) {
    const take = Math.min(8, cidr.bits - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    if ((address[bit / 8]! & mask) !== (cidr.bytes[bit / 8]! & mask)) return false;
  }
  return true;
}

const table = (entries: [string, string][]) =>
  entries.map(([cidr, reason]) => ({ cidr: parseCidr(cidr)!, reason }));

const IPV4_SPECIAL = table([
  ['0.0.0.0/8', 'unspecified ("this network")'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared address space (CGNAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved (6to4 relay)'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
]);

/** Inside global unicast (2000::/3), the blocks that are not the public Internet. */
const IPV6_SPECIAL = table([
  ['2001::/23', 'IETF protocol assignments (Teredo, benchmarking, ORCHID)'],
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
]);
const IPV6_GLOBAL = parseCidr('2000::/3')!;
const IPV6_NAMED = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['fc00::/7', 'unique local (private)'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
]);

/**
 * IPv6 prefixes whose last (for 6to4: third to sixth) bytes are an IPv4 address that is reached. The
 * deprecated IPv4-compatible (::a.b.c.d) and translated forms are outside 2000::/3: refused as reserved.
 */
const EMBEDDING = [
  { cidr: parseCidr('::ffff:0:0/96')!, at: 12, form: 'IPv4-mapped' },
  { cidr: parseCidr('64:ff9b::/96')!, at: 12, form: 'NAT64' },
  { cidr: parseCidr('2002::/16')!, at: 2, form: '6to4' },
];

export const METADATA_ADDRESSES = ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200'].map((text) =>
  parseCidr(text)!,
);

export const isMetadata = (address: IpBytes) => METADATA_ADDRESSES.some((cidr) => inCidr(address, cidr));

/** Why an address is not public unicast (e.g. "loopback"), or undefined when it is. */
export function specialUse(address: IpBytes): string | undefined {
  if (isMetadata(address)) return 'cloud metadata';
  if (address.length === 4) return IPV4_SPECIAL.find((entry) => inCidr(address, entry.cidr))?.reason;
  const named = IPV6_NAMED.find((entry) => inCidr(address, entry.cidr));
  if (named) return named.reason;
  const embedding = EMBEDDING.find((entry) => inCidr(address, entry.cidr));
  if (embedding) {
    const inner = specialUse(address.slice(embedding.at, embedding.at + 4));
    return inner && `${embedding.form} ${inner}`;
  }
  if (!inCidr(address, IPV6_GLOBAL)) return 'reserved';
  return IPV6_SPECIAL.find((entry) => inCidr(address, entry.cidr))?.reason;
}

/** The IPv4 address an IPv6 address reaches (mapped, NAT64, ...), for matching IPv4 CIDRs in the policy. */
export function embeddedIPv4(address: IpBytes): IpBytes | undefined {
  if (address.length !== 16) return undefined;
  const embedding = EMBEDDING.find((entry) => inCidr(address, entry.cidr));
  return embedding && address.slice(embedding.at, embedding.at + 4);
}
