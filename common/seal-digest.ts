/**
 * What a gateway seal covers of a signal's payload (infra/gateway-seal.ts): the SHA-256 of its canonical JSON. Pure,
 * so the workflow computes it too and sends the worker's check only the digest, never the payload again (a 20,000
 * character message would otherwise be in history twice).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/**
 * JSON with sorted keys, after the same round trip the payload takes through Temporal (undefined fields vanish): the
 * gateway's object and the workflow's decoded copy give the same text.
 */
export function canonicalJson(value: unknown): string {
  return canonical(JSON.parse(JSON.stringify(value ?? null)) as unknown);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

export function payloadDigest(payload: unknown): string {
  return bytesToHex(sha256(utf8ToBytes(canonicalJson(payload))));
}
