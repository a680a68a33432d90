/**
 * A local server speaking the Discord REST API (v10) for what the agent uses: channel messages, their
 * edits, reactions, command registration, and follow-ups on an interaction's webhook (which authenticate
 * with the interaction token in the path, not the bot token). The real @discordjs/rest client runs against it (through
 * DISCORD_API_URL). It can answer 429 with retry-after, as Discord does. Records every call.
 *
 * It also speaks enough of the Gateway protocol (v10, JSON, uncompressed) for a discord.js client to log
 * in: HELLO, IDENTIFY -> READY, GUILD_CREATE with one text channel and one thread, heartbeats; the test
 * then dispatches MESSAGE_CREATE events as Discord would.
 */
import { createServer, type Server } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';

export const FAKE_GUILD = '1300000000000000001';
export const FAKE_CHANNEL = '1300000000000000002';
export const FAKE_THREAD = '1300000000000000003';
export const FAKE_BOT_USER = '1300000000000000009';

export interface DiscordCall {
  method: string;
  path: string;
  body: Record<string, unknown> | unknown[] | undefined;
  authorization: string | undefined;
}

export interface DiscordMessage {
  id: string;
  channel_id: string;
  content: string;
  components: unknown[];
  /** Message flags as created (SUPPRESS_EMBEDS = 4: no link previews). */
  flags: number;
}

/** Flags a bot may set when it creates a message: SUPPRESS_EMBEDS and SUPPRESS_NOTIFICATIONS (Discord's docs). */
const CREATE_FLAGS = (1 << 2) | (1 << 12);

export class FakeDiscord {
  readonly calls: DiscordCall[] = [];
  readonly messages = new Map<string, DiscordMessage>();
  /** Every edit of a message's content, in order (streamed answers are edited as they are written). */
  readonly contentEdits: { id: string; content: string }[] = [];
  /** Follow-up messages sent on interaction webhooks (`POST /webhooks/<application>/<interaction token>`). */
  readonly followUps: { applicationId: string; token: string; body: Record<string, unknown> }[] = [];
  /** The next N message posts are refused with 429 and a retry-after, like Discord's rate limiter. */
  rateLimitPosts = 0;
  /** The nth next message post (1: the very next) is refused once with a 400, which the client does not retry. */
  refusePostAt = 0;
  /** Ids of the messages created with components (buttons, menus): the prompts, whatever edits did later. */
  readonly createdWithComponents = new Set<string>();
  /** Message posts are created but never answered (the answer is lost on the way, as when the poster dies). */
  holdPosts = false;
  private server: Server | undefined;
  private gateway: WebSocketServer | undefined;
  private socket: WebSocket | undefined;
  private sequence = 0;
  private nextId = 1n;
  /** Posts by nonce (`enforce_nonce`), per channel: Discord returns the earlier message for a repeat. */
  private readonly byNonce = new Map<string, DiscordMessage>();
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk) => (raw += chunk));
      req.on('end', () => {
        const path = (req.url ?? '').replace(/^\/api\/v10/, '').split('?')[0]!;
        const body = raw ? (JSON.parse(raw) as DiscordCall['body']) : undefined;
        this.calls.push({ method: req.method ?? '', path, body, authorization: req.headers.authorization });
        const json = (status: number, data: unknown, headers: Record<string, string> = {}) =>
          res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(data));
        const followUp = /^\/webhooks\/(\d+)\/([^/]+)$/.exec(path);
        if (followUp && req.method === 'POST') {
          if (req.headers.authorization) return json(400, { message: 'webhooks take no bot token', code: 0 });
          this.followUps.push({
            applicationId: followUp[1]!,
            token: decodeURIComponent(followUp[2]!),
            body: body as Record<string, unknown>,
          });
          return json(200, { id: String(1_400_000_000_000_000_000n + this.nextId++), ...(body as object) });
        }
        if (req.headers.authorization !== 'Bot discord-bot-token-for-tests')
          return json(401, { message: '401: Unauthorized', code: 0 });
        const post = /^\/channels\/(\d+)\/messages$/.exec(path);
        if (post && req.method === 'POST') {
          if (this.refusePostAt > 0 && --this.refusePostAt === 0)
            return json(400, { message: 'Discord refused this post (test)', code: 50006 });
          if (this.rateLimitPosts > 0) {
            this.rateLimitPosts--;
            return json(
              429,
              { message: 'You are being rate limited.', retry_after: 0.3, global: false },
              { 'retry-after': '0.3', 'x-ratelimit-scope': 'user' },
            );
          }
          const { nonce, enforce_nonce } = body as { nonce?: unknown; enforce_nonce?: unknown };
          // Discord: a nonce is an integer or a string of at most 25 characters (else 50035, Invalid Form Body).
          if (
            nonce !== undefined &&
            !(Number.isInteger(nonce) || (typeof nonce === 'string' && nonce.length <= 25))
          )
            return json(400, {
              message: 'Invalid Form Body',
              code: 50035,
              errors: { nonce: 'BASE_TYPE_MAX_LENGTH' },
            });
          const flags = (body as { flags?: unknown }).flags ?? 0;
          if (typeof flags !== 'number' || (flags & ~CREATE_FLAGS) !== 0)
            return json(400, {
              message: 'Invalid Form Body',
              code: 50035,
              errors: { flags: 'MESSAGE_FLAGS_INVALID' },
            });
          const nonceKey =
            enforce_nonce === true && nonce !== undefined ? `${post[1]}:${String(nonce)}` : undefined;
          const earlier = nonceKey ? this.byNonce.get(nonceKey) : undefined;
          if (earlier) return json(200, earlier);
          const message = {
            id: String(1_400_000_000_000_000_000n + this.nextId++),
            channel_id: post[1]!,
            content: String((body as { content?: unknown }).content ?? ''),
            components: ((body as { components?: unknown[] }).components ?? []) as unknown[],
            flags,
          };
          this.messages.set(message.id, message);
          if (message.components.length > 0) this.createdWithComponents.add(message.id);
          if (nonceKey) this.byNonce.set(nonceKey, message);
          if (this.holdPosts) return;
          return json(200, message);
        }
        const edit = /^\/channels\/(\d+)\/messages\/(\d+)$/.exec(path);
        if (edit && req.method === 'PATCH') {
          const message = this.messages.get(edit[2]!);
          if (!message) return json(404, { message: 'Unknown Message', code: 10008 });
          const content = (body as { content?: unknown } | undefined)?.content;
          if (typeof content === 'string') {
            if (content.length > 2_000)
              return json(400, {
                message: 'Invalid Form Body',
                code: 50035,
                errors: { content: 'too long' },
              });
            this.contentEdits.push({ id: message.id, content });
          }
          Object.assign(message, body);
          return json(200, message);
        }
        if (/^\/channels\/\d+\/messages\/\d+\/reactions\//.test(path)) return res.writeHead(204).end();
        if (path === '/gateway/bot')
          return json(200, {
            url: this.url.replace(/^http/, 'ws').replace(/\/api$/, '/gateway'),
            shards: 1,
            session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
          });
        if (/^\/applications\/\d+(\/guilds\/\d+)?\/commands$/.test(path) && req.method === 'PUT')
          return json(
            200,
            (body as unknown[]).map((c, i) => ({ id: String(i + 1), ...(c as object) })),
          );
        return json(404, { message: 'Unknown route', code: 0 });
      });
    });
    this.gateway = new WebSocketServer({ server: this.server, path: '/gateway' });
    this.gateway.on('connection', (socket) => this.serveGateway(socket));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${address.port}/api`;
    return this;
  }

  private serveGateway(socket: WebSocket): void {
    this.socket = socket;
    const send = (payload: Record<string, unknown>) => socket.send(JSON.stringify(payload));
    socket.on('message', (data) => {
      const { op } = JSON.parse(String(data)) as { op: number };
      if (op === 1) return send({ op: 11 });
      if (op !== 2) return;
      const gatewayUrl = this.url.replace(/^http/, 'ws').replace(/\/api$/, '/gateway');
      this.dispatch('READY', {
        v: 10,
        user: { id: FAKE_BOT_USER, username: 'agent', discriminator: '0', bot: true, avatar: null },
        guilds: [{ id: FAKE_GUILD, unavailable: true }],
        session_id: 'fake-session',
        resume_gateway_url: gatewayUrl,
        application: { id: '1000000000000000001', flags: 0 },
        shard: [0, 1],
      });
      const channel = { guild_id: FAKE_GUILD, permission_overwrites: [], position: 0 };
      this.dispatch('GUILD_CREATE', {
        id: FAKE_GUILD,
        name: 'test guild',
        owner_id: '100000000000000001',
        unavailable: false,
        member_count: 2,
        roles: [],
        emojis: [],
        stickers: [],
        features: [],
        members: [],
        presences: [],
        voice_states: [],
        stage_instances: [],
        guild_scheduled_events: [],
        channels: [{ ...channel, id: FAKE_CHANNEL, type: 0, name: 'general' }],
        threads: [
          {
            ...channel,
            id: FAKE_THREAD,
            type: 11,
            name: 'a thread',
            parent_id: FAKE_CHANNEL,
            owner_id: '100000000000000001',
            thread_metadata: {
              archived: false,
              auto_archive_duration: 1440,
              locked: false,
              archive_timestamp: new Date().toISOString(),
            },
          },
        ],
      });
    });
    send({ op: 10, d: { heartbeat_interval: 41_250 } });
  }

  /** Sends a Gateway dispatch (op 0) to the connected client. */
  dispatch(type: string, data: Record<string, unknown>): void {
    this.socket?.send(JSON.stringify({ op: 0, t: type, s: ++this.sequence, d: data }));
  }

  /** A person's message as Discord dispatches it; `mentionBot` puts the bot in the mentions. */
  sendMessage(options: {
    channelId: string;
    authorId: string;
    content: string;
    mentionBot?: boolean;
    guild?: boolean;
    /** The author is a bot (the agent itself, or another bot). */
    bot?: boolean;
  }): string {
    const id = String(1_500_000_000_000_000_000n + this.nextId++);
    this.dispatch('MESSAGE_CREATE', {
      id,
      type: 0,
      channel_id: options.channelId,
      ...(options.guild === false ? {} : { guild_id: FAKE_GUILD }),
      // Discord sends the channel's type, which lets a client build a DM channel it has not seen.
      channel_type: options.guild === false ? 1 : options.channelId === FAKE_THREAD ? 11 : 0,
      author: {
        id: options.authorId,
        username: `user-${options.authorId.slice(-3)}`,
        discriminator: '0',
        avatar: null,
        ...(options.bot ? { bot: true } : {}),
      },
      content: options.content,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: options.mentionBot
        ? [{ id: FAKE_BOT_USER, username: 'agent', discriminator: '0', bot: true, avatar: null }]
        : [],
      mention_roles: [],
      attachments: [],
      embeds: [],
      pinned: false,
    });
    return id;
  }

  get gatewayConnected(): boolean {
    return this.socket !== undefined;
  }

  /** Messages the bot posted in a channel, oldest first. */
  postedIn(channelId: string): DiscordMessage[] {
    return [...this.messages.values()].filter((m) => m.channel_id === channelId);
  }

  of(method: string, pattern: RegExp): DiscordCall[] {
    return this.calls.filter((c) => c.method === method && pattern.test(c.path));
  }

  async stop(): Promise<void> {
    for (const client of this.gateway?.clients ?? []) client.terminate();
    this.gateway?.close();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
