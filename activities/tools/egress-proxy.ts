/**
 * The sandbox's only way out under `"network": "full"`: an HTTP proxy outside the namespace that applies the
 * address policy of http_request (address-policy.ts) to every connection. The sandbox keeps its own empty network
 * namespace (nothing but its loopback), so the worker's host, Temporal's frontend, the gateway, private ranges and
 * metadata services are out of reach; inside, a small bridge (egress-bridge.cjs) forwards 127.0.0.1:3128 to this
 * proxy's Unix socket, and the proxy variables point every well-behaved client there. A client that ignores them
 * reaches nothing at all.
 *
 * HTTPS and any other TCP go through CONNECT (the proxy never sees inside the tunnel); plain HTTP through an
 * absolute-form request. The destination is resolved here, judged, and connected to at exactly the addresses
 * judged, so a DNS answer that changes in between never counts.
 */
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { vetDestination, type AddressPolicy, type Resolve, systemResolve } from './address-policy';
import { effectivePort } from './host-patterns';

/** The port the bridge listens on inside the sandbox, as the proxy variables name it. */
export const SANDBOX_PROXY_PORT = 3128;
/** Where the proxy's directory (its socket) appears inside the sandbox. */
export const SANDBOX_EGRESS_DIR = '/run/egress';
export const EGRESS_SOCKET_NAME = 'proxy.sock';
/** Connections one command may hold through the proxy at once (each also holds one upstream). */
export const MAX_CONNECTIONS_PER_COMMAND = 64;

export interface EgressProxy {
  /** The directory holding the socket, bound into the sandbox at SANDBOX_EGRESS_DIR. */
  dir: string;
  close(): Promise<void>;
}

/** `host:port` of a CONNECT or the URL of an absolute-form request, as a URL the address policy judges. */
function destination(target: string, secure: boolean): URL | undefined {
  try {
    const url = new URL(secure ? `https://${target}/` : target);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (secure && !/:\d+$/.test(target)) return undefined;
    return url;
  } catch {
    return undefined;
  }
}

const refusal = (reason: string) =>
  `refused by the sandbox's network policy: ${reason}. "network": "full" reaches public addresses only; ` +
  `"allowHosts" in the policy file opens others.\n`;

/**
 * Starts a proxy for one command on a fresh Unix socket, in a 0700 directory with the socket 0600, both owned by the
 * uid the command runs as (`uid`, when the worker runs as root; else the worker's own): the command connects, and
 * no other local account can use the proxy while it runs.
 */
export async function startEgressProxy(
  policy: AddressPolicy,
  options: { uid?: number | undefined; resolve?: Resolve } = {},
): Promise<EgressProxy> {
  const resolve = options.resolve ?? systemResolve;
  const dir = mkdtempSync(path.join(tmpdir(), 'egress-'));
  chmodSync(dir, 0o700);
  if (options.uid !== undefined) chownSync(dir, options.uid, options.uid);
  const socketPath = path.join(dir, EGRESS_SOCKET_NAME);
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  const vet = async (url: URL) => {
    try {
      return await vetDestination(url, policy, resolve);
    } catch (error) {
      return { ok: false as const, reason: (error as Error).message };
    }
  };

  const server = http.createServer((request, response) => void forward(request, response));
  // One command's connections at once: a command opening thousands cannot exhaust the worker's descriptors.
  server.maxConnections = MAX_CONNECTIONS_PER_COMMAND;
  server.on('connection', track);
  server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => {
    void tunnel(request, client, head);
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  async function tunnel(request: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const url = destination(request.url ?? '', true);
    if (!url) return void client.end(`HTTP/1.1 400 Bad Request\r\n\r\nCONNECT needs host:port\n`);
    const vetted = await vet(url);
    if (!vetted.ok)
      return void client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${refusal(vetted.reason)}`,
      );
    // `new URL('https://h:443/').port` is '' (the default port): the effective port, not 0.
    const upstream = net.connect({ host: vetted.addresses[0]!, port: effectivePort(url) });
    track(upstream);
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    upstream.once('error', (error) => {
      if (!client.destroyed)
        client.end(`HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\n${error.message}\n`);
    });
    client.once('close', () => upstream.destroy());
  }

  async function forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = destination(request.url ?? '', false);
    if (!url || url.protocol !== 'http:') {
      response.writeHead(400, { 'content-type': 'text/plain' });
      return void response.end('this proxy takes absolute http:// URLs, and CONNECT for anything else\n');
    }
    const vetted = await vet(url);
    if (!vetted.ok) {
      response.writeHead(403, { 'content-type': 'text/plain' });
      return void response.end(refusal(vetted.reason));
    }
    const headers = { ...request.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const upstream = http.request(
      {
        host: vetted.addresses[0]!,
        port: effectivePort(url),
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers: { ...headers, host: url.host },
        agent: false,
      },
      (reply) => {
        response.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(response);
      },
    );
    upstream.on('error', (error) => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(`${error.message}\n`);
    });
    request.pipe(upstream);
  }

  await new Promise<void>((ready, fail) => {
    server.once('error', fail);
    server.listen(socketPath, () => ready());
  });
  chmodSync(socketPath, 0o600);
  if (options.uid !== undefined) chownSync(socketPath, options.uid, options.uid);
  return {
    dir,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
