/**
 * A local server speaking the Slack Web API (POST /api/<method>) and accepting response_url posts, so the
 * real @slack/web-api client and Bolt run against it. Records every call for assertions.
 */
import { createServer, type Server } from 'node:http';

export interface SlackCall {
  method: string;
  body: Record<string, unknown>;
}

export class FakeSlack {
  readonly calls: SlackCall[] = [];
  private server: Server | undefined;
  private nextTs = 1;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk) => (raw += chunk));
      req.on('end', () => {
        const body = parseBody(raw, req.headers['content-type'] ?? '');
        const method = (req.url ?? '').replace(/^\/api\//, '').replace(/^\/response\/.*/, 'response_url');
        this.calls.push({ method, body });
        const reply = (data: Record<string, unknown>) =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ ok: true, ...data }));
        switch (method) {
          case 'auth.test':
            return reply({ user_id: 'UBOT', bot_id: 'BBOT', team_id: 'T1', user: 'agent' });
          case 'chat.postMessage':
            return reply({
              channel: body.channel,
              ts: `1800000000.${String(this.nextTs++).padStart(6, '0')}`,
            });
          case 'chat.postEphemeral':
            return reply({ message_ts: `1800000000.${String(this.nextTs++).padStart(6, '0')}` });
          default:
            return reply({});
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return this;
  }

  of(method: string): Record<string, unknown>[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.body);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** The WebClient posts form-encoded fields (blocks as JSON strings); response_url posts are JSON. */
function parseBody(raw: string, type: string): Record<string, unknown> {
  if (type.includes('application/json')) return JSON.parse(raw || '{}') as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    out[key] = /^[[{]/.test(value) ? safeJson(value) : value;
  }
  return out;
}

function safeJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
