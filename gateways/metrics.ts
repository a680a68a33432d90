/**
 * The gateway's Prometheus metrics (GATEWAY_METRICS_ADDRESS, served at /metrics on a port of its own, never on the
 * public listener), with `prom-client`: requests by surface and status class, decisions and answers sent into
 * conversations by channel and result, "Needs you" reads, and the process's own figures. Labels are
 * low-cardinality by construction: a fixed list of surfaces, channels and results; never a person, a conversation,
 * a path or an id.
 */
import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';

const registry = new Registry();

const requests = new Counter({
  name: 'agent_gateway_requests_total',
  help: 'HTTP requests the gateway answered, by surface (slack, discord, teams, web_api, agui, a2a, email, oauth, operator, …) and status class',
  labelNames: ['surface', 'status'] as const,
  registers: [registry],
});
const decisions = new Counter({
  name: 'agent_gateway_decisions_total',
  help: 'Decisions and answers sent into conversations (a click, a form, a typed reply), by channel and result (sent, failed)',
  labelNames: ['channel', 'kind', 'result'] as const,
  registers: [registry],
});
const inboxReads = new Counter({
  name: 'agent_inbox_reads_total',
  help: '"Needs you" reads, by result (ok, failed)',
  labelNames: ['result'] as const,
  registers: [registry],
});

const SURFACES: [RegExp, string][] = [
  [/^\/slack\//, 'slack'],
  [/^\/discord\//, 'discord'],
  [/^\/teams\//, 'teams'],
  [/^\/api\/agui/, 'agui'],
  [/^\/api\/a2a|^\/\.well-known\/agent/, 'a2a'],
  [/^\/api\/inbox/, 'inbox'],
  [/^\/api\//, 'web_api'],
  [/^\/email\//, 'email'],
  [/^\/oauth\//, 'oauth'],
  [/^\/operator\/|^\/codec\//, 'operator'],
  [/^\/temporal\//, 'temporal_ui'],
  [/^\/missions\//, 'missions'],
];

/** The surface a request path belongs to: one of a fixed list, so a path can never become a label. */
export function surfaceOf(url: string | undefined): string {
  const path = (url ?? '/').split('?')[0]!;
  return SURFACES.find(([pattern]) => pattern.test(path))?.[1] ?? 'page';
}

export function countRequest(url: string | undefined, status: number): void {
  requests.inc({ surface: surfaceOf(url), status: `${Math.floor(status / 100)}xx` });
}

const CHANNELS = new Set(['web', 'slack', 'discord', 'teams', 'mission']);
export function countDecision(channel: string, kind: 'decision' | 'answer', sent: boolean): void {
  decisions.inc({
    channel: CHANNELS.has(channel) ? channel : 'other',
    kind,
    result: sent ? 'sent' : 'failed',
  });
}

export function countInboxRead(ok: boolean): void {
  inboxReads.inc({ result: ok ? 'ok' : 'failed' });
}

/** Serves /metrics on `host:port`; the process's own figures are collected from then on. */
export async function serveGatewayMetrics(address: string): Promise<Server> {
  collectDefaultMetrics({ register: registry, prefix: 'agent_gateway_' });
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(at + 1));
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics')
      return void res.writeHead(404).end();
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
