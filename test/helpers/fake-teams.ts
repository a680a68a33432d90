/**
 * A fake Microsoft Bot Connector at its protocol boundary: the OpenID metadata and signing keys incoming activities
 * are verified with, the identity platform's token endpoint (client credentials, checked), and the connector's
 * `POST/PUT /v3/conversations/{id}/activities` the bot answers through (refused without a token it issued; answered
 * after a realistic delay). It signs activities as the real connector does (RS256 JWT, issuer
 * https://api.botframework.com, audience the app id, the activity's serviceUrl as a claim).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';

export interface SentActivity {
  method: 'POST' | 'PUT';
  conversationId: string;
  activityId?: string;
  body: {
    type: string;
    text?: string;
    attachments?: { contentType: string; content: Record<string, unknown> }[];
  };
}

/** A Teams stream (personal chats only): its updates' texts in order, and its final message once closed. */
export interface FakeStream {
  id: string;
  conversationId: string;
  updates: string[];
  sequence: number;
  final?: string;
}

interface StreamInfo {
  type: 'streaminfo';
  streamId?: string;
  streamType?: string;
  streamSequence?: number;
}

export class FakeTeams {
  readonly appId = randomUUID();
  readonly appPassword = `teams-secret-${randomUUID()}`;
  readonly sent: SentActivity[] = [];
  readonly tokenRequests: URLSearchParams[] = [];
  private server!: Server;
  private key!: { privateKey: CryptoKey; kid: string };
  private readonly issued = new Set<string>();
  private next = 1;
  private readonly streamsById = new Map<string, FakeStream>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  /** Where conversations are served (the activities' serviceUrl). */
  get serviceUrl(): string {
    return `${this.url}/`;
  }

  env(): Record<string, string> {
    return {
      TEAMS_APP_ID: this.appId,
      TEAMS_APP_PASSWORD: this.appPassword,
      TEAMS_OPENID_METADATA: `${this.url}/openid`,
      TEAMS_TOKEN_URL: `${this.url}/token`,
    };
  }

  async start(): Promise<void> {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const kid = randomUUID();
    this.key = { privateKey, kid };
    const jwk = { ...(await exportJWK(publicKey)), kid, use: 'sig', alg: 'RS256' };
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', this.url);
        const json = (status: number, body: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        };
        if (req.method === 'GET' && url.pathname === '/openid')
          return json(200, { jwks_uri: `${this.url}/keys` });
        if (req.method === 'GET' && url.pathname === '/keys') return json(200, { keys: [jwk] });
        if (req.method === 'POST' && url.pathname === '/token') {
          const form = new URLSearchParams(raw);
          this.tokenRequests.push(form);
          if (form.get('client_id') !== this.appId || form.get('client_secret') !== this.appPassword)
            return json(401, { error: 'invalid_client' });
          const token = `bot-token-${randomUUID()}`;
          this.issued.add(token);
          return json(200, { access_token: token, token_type: 'Bearer', expires_in: 3600 });
        }
        const match = /^\/v3\/conversations\/([^/]+)\/activities(?:\/([^/]+))?$/.exec(url.pathname);
        if (!match) return json(404, { error: 'not found' });
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        if (!token || !this.issued.has(token)) return json(401, { error: 'unauthorized' });
        const conversationId = decodeURIComponent(match[1]!);
        const activityId = match[2] ? decodeURIComponent(match[2]) : undefined;
        // The connector answers after a moment, as the real one does.
        setTimeout(() => {
          if (req.method === 'POST' && !activityId) {
            const body = JSON.parse(raw) as SentActivity['body'] & { entities?: StreamInfo[] };
            const info = body.entities?.find((e) => e.type === 'streaminfo');
            if (info) {
              const taken = this.stream(conversationId, body, info);
              if (taken && 'id' in taken) return json(taken.status, { id: taken.id });
              if (taken) return json(taken.status, { error: { code: taken.code, message: taken.code } });
            }
            const id = `act-${this.next++}`;
            this.sent.push({ method: 'POST', conversationId, activityId: id, body: JSON.parse(raw) });
            return json(201, { id });
          }
          if (req.method === 'PUT' && activityId) {
            this.sent.push({ method: 'PUT', conversationId, activityId, body: JSON.parse(raw) });
            return json(200, { id: activityId });
          }
          json(405, { error: 'method' });
        }, 25);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /**
   * Teams' streaming protocol, as strict as the service: only in personal chats (`a:` ids); a stream starts with a
   * typing activity at sequence 1 (its id is the stream's), goes on with typing activities whose sequence grows, and
   * ends with one message with `streamType: final`; nothing is taken after that. Returns the stream's id, a
   * refusal, or undefined for the final message (then posted as a message).
   */
  private stream(
    conversationId: string,
    body: { type: string; text?: string },
    info: StreamInfo,
  ): { status: number; id: string } | { status: number; code: string } | undefined {
    if (!conversationId.startsWith('a:')) return { status: 403, code: 'ContentStreamNotAllowed' };
    if (!body.text) return { status: 400, code: 'BadArgument' };
    if (info.streamType === 'streaming' && !info.streamId) {
      if (body.type !== 'typing' || info.streamSequence !== 1) return { status: 400, code: 'BadArgument' };
      const id = `stream-${this.next++}`;
      this.streamsById.set(id, { id, conversationId, updates: [body.text], sequence: 1 });
      return { status: 201, id };
    }
    const stream = info.streamId ? this.streamsById.get(info.streamId) : undefined;
    if (!stream || stream.conversationId !== conversationId) return { status: 404, code: 'BadArgument' };
    if (stream.final !== undefined) return { status: 403, code: 'ContentStreamNotAllowed' };
    if (info.streamType === 'streaming') {
      if (body.type !== 'typing') return { status: 400, code: 'BadArgument' };
      if (!(typeof info.streamSequence === 'number' && info.streamSequence > stream.sequence))
        return { status: 400, code: 'ContentStreamSequenceOrderPreConditionFailed' };
      stream.sequence = info.streamSequence;
      stream.updates.push(body.text);
      return { status: 202, id: stream.id };
    }
    if (info.streamType !== 'final' || body.type !== 'message') return { status: 400, code: 'BadArgument' };
    stream.final = body.text;
    return undefined;
  }

  /** The streams of a conversation, oldest first. */
  streams(conversationId: string): FakeStream[] {
    return [...this.streamsById.values()].filter((s) => s.conversationId === conversationId);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** A token as the connector signs one for an activity; `change` makes it wrong in one way. */
  async token(
    serviceUrl: string,
    change: { audience?: string; issuer?: string; expiresIn?: number; key?: CryptoKey; kid?: string } = {},
  ): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return await new SignJWT({ serviceurl: serviceUrl })
      .setProtectedHeader({ alg: 'RS256', kid: change.kid ?? this.key.kid })
      .setIssuer(change.issuer ?? 'https://api.botframework.com')
      .setAudience(change.audience ?? this.appId)
      .setIssuedAt(now - 10)
      .setNotBefore(now - 10)
      .setExpirationTime(now + (change.expiresIn ?? 3600))
      .sign(change.key ?? this.key.privateKey);
  }

  /** An activity POSTed to a gateway's Teams endpoint with `token` (none: unsigned), as the connector sends it. */
  async send(gatewayPort: number, activity: Record<string, unknown>, token?: string) {
    const response = await fetch(`http://127.0.0.1:${gatewayPort}/teams/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(activity),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
    };
  }

  /** The same, signed as the connector signs it for the activity's serviceUrl. */
  async signed(gatewayPort: number, activity: Record<string, unknown>) {
    return await this.send(gatewayPort, activity, await this.token(activity.serviceUrl as string));
  }

  /** Cards posted or edited in a conversation, newest last. */
  cards(conversationId: string): { activityId: string; method: string; card: Record<string, unknown> }[] {
    return this.sent
      .filter((s) => s.conversationId === conversationId && s.body.attachments?.length)
      .map((s) => ({ activityId: s.activityId!, method: s.method, card: s.body.attachments![0]!.content }));
  }

  texts(conversationId: string): string[] {
    return this.sent
      .filter((s) => s.conversationId === conversationId && s.body.text)
      .map((s) => s.body.text!);
  }
}

/** A message activity from a person in a conversation. */
export function teamsMessage(
  serviceUrl: string,
  conversationId: string,
  aadObjectId: string,
  text: string,
  id = `msg-${randomUUID()}`,
) {
  return {
    type: 'message',
    id,
    channelId: 'msteams',
    serviceUrl,
    conversation: { id: conversationId },
    from: { id: `29:${aadObjectId}`, aadObjectId },
    recipient: { id: '28:bot' },
    text,
  };
}

/** A card click (Universal Actions) from a person. */
export function teamsCardAction(
  serviceUrl: string,
  conversationId: string,
  aadObjectId: string,
  verb: string,
  data: Record<string, unknown>,
) {
  return {
    type: 'invoke',
    name: 'adaptiveCard/action',
    id: `inv-${randomUUID()}`,
    channelId: 'msteams',
    serviceUrl,
    conversation: { id: conversationId },
    from: { id: `29:${aadObjectId}`, aadObjectId },
    value: { action: { type: 'Action.Execute', verb, data }, trigger: 'manual' },
  };
}
