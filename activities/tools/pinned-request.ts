/**
 * One HTTP exchange connected to addresses already checked (no second DNS lookup; TLS still verifies the
 * certificate against the host name), and a response body read as a stream up to a byte cap.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

export interface Hop {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** Sends one request to `addresses` (the vetted answers for the URL's host) and resolves with the response. */
export function sendPinned(hop: Hop, addresses: string[], signal: AbortSignal): Promise<IncomingMessage> {
  const hostname = hop.url.hostname.replace(/^\[|\]$/g, '');
  const answers = addresses.map((address) => ({ address, family: isIP(address) }));
  // Called by the socket instead of DNS; `all` is asked for when Node races IPv4 and IPv6 (happy eyeballs).
  const pinned = ((_name: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, answers);
    else callback(null, answers[0]!.address, answers[0]!.family);
  }) as LookupFunction;
  const secure = hop.url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const request = (secure ? https : http).request(
      {
        hostname,
        port: hop.url.port || undefined,
        path: `${hop.url.pathname}${hop.url.search}`,
        method: hop.method,
        headers: hop.headers,
        agent: false,
        lookup: pinned,
        signal,
        ...(secure && !isIP(hostname) ? { servername: hostname } : {}),
      },
      resolve,
    );
    request.on('error', reject);
    request.end(hop.body);
  });
}

/**
 * At most `cap` bytes of the (decompressed) body; the connection is closed as soon as more arrive, so a
 * huge or endless response costs no more than the cap.
 */
export async function readCapped(
  response: IncomingMessage,
  cap: number,
): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of decoded(response)) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size > cap) {
        truncated = true;
        break;
      }
    }
  } finally {
    response.destroy();
  }
  const bytes = Buffer.concat(chunks).subarray(0, cap);
  // `stream: true` holds back a character cut in half at the cap instead of mangling it.
  return { text: new TextDecoder().decode(bytes, { stream: truncated }), truncated };
}

function decoded(response: IncomingMessage): Readable {
  const encoding = (response.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (!decoder) return response;
  response.on('error', (error) => decoder.destroy(error));
  return response.pipe(decoder);
}
