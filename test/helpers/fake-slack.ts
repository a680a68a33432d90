/**
 * A local server speaking the Slack Web API (POST /api/<method>) and accepting response_url posts, so the
 * real @slack/web-api client and Bolt run against it. Records every call for assertions.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';

export interface SlackCall {
  method: string;
  body: Record<string, unknown>;
}

/** A streaming message (chat.startStream): what it shows, and whether it is still being written. */
export interface SlackStream {
  channel: string;
  threadTs: string;
  text: string;
  chunks: Record<string, unknown>[];
  streaming: boolean;
  blocks?: unknown[];
}

export class FakeSlack {
  readonly calls: SlackCall[] = [];
  /** Streaming messages by ts. */
  readonly streams = new Map<string, SlackStream>();
  private server: Server | undefined;
  private nextTs = 1;
  private sockets: WebSocketServer | undefined;
  private socket: WebSocket | undefined;
  private readonly acks = new Map<string, (payload: unknown) => void>();
  private readonly failures: { method: string; left: number; error: string }[] = [];
  /** Methods Slack is slow to answer: their requests wait until released (see `hold`). */
  private readonly held = new Map<string, Promise<void>>();
  url = '';

  /** Set: chat.startStream answers with this Slack error (a workspace without streaming messages). */
  refuseStreams: string | undefined;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk) => (raw += chunk));
      req.on('end', async () => {
        const body = parseBody(raw, req.headers['content-type'] ?? '');
        const method = (req.url ?? '').replace(/^\/api\//, '').replace(/^\/response\/.*/, 'response_url');
        await this.held.get(method);
        const failure = this.failures.find((f) => f.method === method);
        if (failure && --failure.left === 0) {
          // Refused, so not recorded: nothing was posted.
          this.failures.splice(this.failures.indexOf(failure), 1);
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ ok: false, error: failure.error }));
          return;
        }
        const invalid = refusal(method, body) ?? this.streamRefusal(method, body);
        if (invalid) {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ ok: false, error: invalid }));
          return;
        }
        this.calls.push({ method, body });
        const reply = (data: Record<string, unknown>) =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ ok: true, ...data }));
        switch (method) {
          case 'apps.connections.open':
            return reply({ url: `${this.url.replace('http', 'ws')}/socket` });
          case 'auth.test':
            return reply({ user_id: 'UBOT', bot_id: 'BBOT', team_id: 'T1', user: 'agent' });
          case 'chat.postMessage':
            return reply({
              channel: body.channel,
              ts: `1800000000.${String(this.nextTs++).padStart(6, '0')}`,
            });
          case 'chat.postEphemeral':
            return reply({ message_ts: `1800000000.${String(this.nextTs++).padStart(6, '0')}` });
          case 'chat.startStream': {
            const ts = `1800000000.${String(this.nextTs++).padStart(6, '0')}`;
            this.streams.set(ts, {
              channel: String(body.channel),
              threadTs: String(body.thread_ts),
              text: '',
              chunks: [],
              streaming: true,
            });
            this.addToStream(ts, body);
            return reply({ channel: body.channel, ts });
          }
          case 'chat.appendStream':
          case 'chat.stopStream': {
            const ts = String(body.ts);
            this.addToStream(ts, body);
            if (method === 'chat.stopStream') {
              const stream = this.streams.get(ts)!;
              stream.streaming = false;
              if (body.blocks) stream.blocks = body.blocks as unknown[];
            }
            return reply({ channel: body.channel, ts });
          }
          default:
            return reply({});
        }
      });
    });
    // Socket Mode: the app connects here after apps.connections.open, gets "hello", then envelopes to ack.
    this.sockets = new WebSocketServer({ server: this.server, path: '/socket' });
    this.sockets.on('connection', (socket) => {
      this.socket = socket;
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as { envelope_id?: string; payload?: unknown };
        if (message.envelope_id) this.acks.get(message.envelope_id)?.(message.payload);
      });
      socket.send(JSON.stringify({ type: 'hello', num_connections: 1, debug_info: { host: 'fake' } }));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return this;
  }

  private addToStream(ts: string, body: Record<string, unknown>): void {
    const stream = this.streams.get(ts)!;
    if (typeof body.markdown_text === 'string') stream.text += body.markdown_text;
    for (const chunk of (body.chunks ?? []) as Record<string, unknown>[]) {
      if (chunk.type === 'markdown_text') stream.text += String(chunk.text);
      else stream.chunks.push(chunk);
    }
  }

  /**
   * Like Slack: a stream is a reply in a thread, addressed to one person outside a DM, with text or chunks of
   * the known kinds; only a stream still being written takes more; a message being streamed cannot be edited.
   */
  private streamRefusal(method: string, body: Record<string, unknown>): string | undefined {
    const streaming = (ts: unknown) => this.streams.get(String(ts))?.streaming === true;
    if (method === 'chat.update' && streaming(body.ts)) return 'cant_update_message';
    const userId = /^[UW][A-Z0-9]+$/;
    if (!['chat.startStream', 'chat.appendStream', 'chat.stopStream'].includes(method)) return undefined;
    if (method === 'chat.startStream' && this.refuseStreams) return this.refuseStreams;
    if (typeof body.channel !== 'string' || !body.channel) return 'invalid_arguments';
    if (method === 'chat.startStream') {
      if (typeof body.thread_ts !== 'string') return 'invalid_arguments';
      if (
        !body.channel.startsWith('D') &&
        (!userId.test(String(body.recipient_user_id)) || !/^T[A-Z0-9]+$/.test(String(body.recipient_team_id)))
      )
        return 'invalid_arguments';
    } else if (!this.streams.has(String(body.ts))) return 'message_not_found';
    else if (!streaming(body.ts)) return 'message_not_in_streaming_state';
    const text = body.markdown_text;
    if (text !== undefined && (typeof text !== 'string' || text.length > 12_000)) return 'invalid_arguments';
    const chunks = body.chunks;
    if (chunks !== undefined && (!Array.isArray(chunks) || !chunks.every(validChunk)))
      return 'invalid_arguments';
    if (method !== 'chat.stopStream' && text === undefined && chunks === undefined)
      return 'invalid_arguments';
    return undefined;
  }

  /** What a worker and gateway need to talk to this fake as the Slack app signed with `signingSecret`. */
  env(signingSecret: string): Record<string, string> {
    return {
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: `${this.url}/api/`,
    };
  }

  /** Answers no call of `method` until the returned function is called (the calls wait, then go through). */
  hold(method: string): () => void {
    let release: () => void = () => undefined;
    this.held.set(method, new Promise<void>((resolve) => (release = resolve)));
    return () => {
      this.held.delete(method);
      release();
    };
  }

  /** Refuses the `nth` next call of `method` (1: the very next) with a Slack error, once. */
  failCall(method: string, nth = 1, error = 'internal_error'): void {
    this.failures.push({ method, left: nth, error });
  }

  get socketConnected(): boolean {
    return this.socket !== undefined;
  }

  /** Sends a Socket Mode envelope and resolves with the app's ack payload. */
  async envelope(type: 'events_api' | 'interactive' | 'slash_commands', payload: unknown): Promise<unknown> {
    const id = randomUUID();
    const acked = new Promise<unknown>((resolve) => this.acks.set(id, resolve));
    this.socket!.send(
      JSON.stringify({ type, envelope_id: id, payload, accepts_response_payload: type !== 'events_api' }),
    );
    return await acked;
  }

  of(method: string): Record<string, unknown>[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.body);
  }

  async stop(): Promise<void> {
    for (const client of this.sockets?.clients ?? []) client.terminate();
    this.sockets?.close();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** Like Slack, the assistant methods refuse a call without their required arguments (not recorded). */
function refusal(method: string, body: Record<string, unknown>): string | undefined {
  if (!method.startsWith('assistant.threads.')) return undefined;
  const text = (key: string) => typeof body[key] === 'string' && (body[key] as string).length > 0;
  if (!text('channel_id') || !text('thread_ts')) return 'invalid_arguments';
  switch (method) {
    case 'assistant.threads.setStatus':
      return typeof body.status === 'string' ? undefined : 'invalid_arguments';
    case 'assistant.threads.setTitle':
      return text('title') ? undefined : 'invalid_arguments';
    case 'assistant.threads.setSuggestedPrompts': {
      const prompts = body.prompts;
      const ok =
        Array.isArray(prompts) &&
        prompts.length >= 1 &&
        prompts.length <= 4 &&
        prompts.every(
          (p: { title?: unknown; message?: unknown }) =>
            typeof p.title === 'string' && typeof p.message === 'string',
        );
      return ok ? undefined : 'invalid_arguments';
    }
    default:
      return 'unknown_method';
  }
}

function validChunk(chunk: unknown): boolean {
  const c = chunk as Record<string, unknown>;
  const text = (key: string) => typeof c[key] === 'string' && (c[key] as string).length > 0;
  switch (c?.type) {
    case 'markdown_text':
      return typeof c.text === 'string' && c.text.length <= 12_000;
    case 'plan_update':
      return text('title');
    case 'task_update':
      return (
        text('id') &&
        text('title') &&
        ['pending', 'in_progress', 'complete', 'error'].includes(String(c.status))
      );
    default:
      return false;
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
