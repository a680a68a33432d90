/**
 * A real OAuth 2.0 / OpenID Connect provider for tests (oauth2-mock-server: discovery, /authorize with
 * PKCE, /token with authorization_code and refresh_token grants, signed JWT access tokens, JWKS), plus a
 * protected API that accepts only a valid bearer token from it (checked with jose against its JWKS) or
 * the right API key. Every secret the provider hands out or receives is recorded, so tests can prove
 * none of them leaks.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { OAuth2Server } from 'oauth2-mock-server';

export const CLIENT_ID = 'agent-test-client';
export const CLIENT_SECRET = 'client-secret-for-tests-7f3a';
export const API_KEY = 'weather-api-key-for-tests-91c2';

export class TestOAuthProvider {
  readonly server = new OAuth2Server();
  /** Every access/refresh/id token issued, authorization code and PKCE verifier received. */
  readonly secrets = new Set<string>();
  /** Token endpoint requests, by grant type. */
  readonly grants: string[] = [];
  /** Clients registered dynamically (RFC 7591), and the client id of every token request. */
  readonly registrations: { clientId: string; redirectUris: string[] }[] = [];
  readonly tokenClients: string[] = [];
  /** The `resource` indicator (RFC 8707) of every authorization request. */
  readonly authorizeResources: (string | undefined)[] = [];
  /** Next token responses live this many seconds (default: the server's own, an hour). */
  expiresIn: number | undefined;
  private api: Server | undefined;
  issuer = '';
  apiUrl = '';

  /** The policy file's `acme` provider for this server, and its API host allowed: what most tests configure. */
  acmePolicy(): { allowHosts: string[]; providers: Record<string, Record<string, unknown>> } {
    const host = new URL(this.apiUrl).host;
    return {
      allowHosts: [host],
      providers: {
        acme: {
          type: 'oauth2',
          displayName: 'Acme Files',
          issuer: this.issuer,
          scopes: ['files.read'],
          apiHosts: [host],
        },
      },
    };
  }

  async start(): Promise<this> {
    await this.server.issuer.keys.generate('RS256');
    await this.server.start(0, '127.0.0.1');
    this.issuer = this.server.issuer.url!;
    this.server.service.on(
      'beforeAuthorizeRedirect',
      (redirect: { url: URL }, req: { query?: Record<string, unknown> }) => {
        const code = redirect.url.searchParams.get('code');
        if (code) this.secrets.add(code);
        const resource = req.query?.resource;
        this.authorizeResources.push(typeof resource === 'string' ? resource : undefined);
      },
    );
    this.server.service.on(
      'beforeTokenSigning',
      (token: { payload: Record<string, unknown> }, req: { body?: Record<string, unknown> }) => {
        if (this.expiresIn !== undefined) token.payload.exp = Math.floor(Date.now() / 1000) + this.expiresIn;
        // A unique id per token, as real providers give: without it, two sign-ins within one second get the
        // very same signed JWT, and a token revoked before the second sign-in would come back from it.
        token.payload.jti = randomUUID();
        // RFC 8707: an access token asked for a resource is for that resource only (an ID token's audience
        // stays the client).
        const isIdToken = token.payload.aud !== undefined && token.payload.aud === req.body?.client_id;
        if (typeof req.body?.resource === 'string' && !isIdToken) token.payload.aud = req.body.resource;
      },
    );
    this.server.service.on(
      'beforeResponse',
      (response: { body: Record<string, unknown> }, req: { body?: Record<string, unknown> }) => {
        this.grants.push(String(req.body?.grant_type));
        if (typeof req.body?.client_id === 'string') this.tokenClients.push(req.body.client_id);
        for (const key of ['code', 'code_verifier', 'refresh_token', 'client_secret'])
          if (typeof req.body?.[key] === 'string') this.secrets.add(req.body[key] as string);
        for (const key of ['access_token', 'refresh_token', 'id_token'])
          if (typeof response.body[key] === 'string') this.secrets.add(response.body[key] as string);
        if (this.expiresIn !== undefined) response.body.expires_in = this.expiresIn;
      },
    );
    const jwks = createRemoteJWKSet(new URL(`${this.issuer}/jwks`));
    this.api = createServer((req, res) => {
      void (async () => {
        if (req.url === '/register' && req.method === 'POST') return this.register(req, res);
        if (req.url?.startsWith('/weather')) {
          const ok = req.headers['x-api-key'] === API_KEY;
          return res.writeHead(ok ? 200 : 401).end(ok ? 'sunny, 21°C' : 'missing or wrong API key');
        }
        const auth = req.headers.authorization ?? '';
        try {
          const { payload } = await jwtVerify(auth.replace(/^Bearer /, ''), jwks, { issuer: this.issuer });
          res
            .writeHead(200, { 'content-type': 'text/plain' })
            .end(`hello ${payload.sub}, your files: report.pdf`);
        } catch {
          res.writeHead(401).end('a valid bearer token is required');
        }
      })();
    });
    await new Promise<void>((resolve) => this.api!.listen(0, '127.0.0.1', resolve));
    this.apiUrl = `http://127.0.0.1:${(this.api.address() as { port: number }).port}`;
    return this;
  }

  /** Advertise dynamic client registration (RFC 7591) in the provider's metadata. */
  offerRegistration(): void {
    this.server.service.on(
      'beforeWellKnownOpenIdConfiguration',
      (response: { body: Record<string, unknown> }) => {
        response.body.registration_endpoint = `${this.apiUrl}/register`;
      },
    );
  }

  private async register(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body = JSON.parse(raw || '{}') as { redirect_uris?: string[]; token_endpoint_auth_method?: string };
    if (!Array.isArray(body.redirect_uris) || !body.redirect_uris.length) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_redirect_uri' }));
      return;
    }
    const clientId = `dyn-${this.registrations.length + 1}-${Math.random().toString(36).slice(2, 8)}`;
    this.registrations.push({ clientId, redirectUris: body.redirect_uris });
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ ...body, client_id: clientId, client_id_issued_at: Math.floor(Date.now() / 1000) }),
    );
  }

  /** The next authorization request is refused by the "user" (access_denied), as a consent screen would. */
  denyNextConsent(): void {
    this.server.service.once('beforeAuthorizeRedirect', (redirect: { url: URL }) => {
      redirect.url.searchParams.delete('code');
      redirect.url.searchParams.set('error', 'access_denied');
      redirect.url.searchParams.set('error_description', 'The user denied the request');
    });
  }

  /** The next token request fails as a provider error (e.g. the code was already used). */
  failNextToken(): void {
    this.server.service.once('beforeResponse', (response: { body: unknown; statusCode: number }) => {
      response.statusCode = 400;
      response.body = { error: 'invalid_grant', error_description: 'authorization code is invalid' };
    });
  }

  async stop(): Promise<void> {
    await this.server.stop();
    this.api?.closeAllConnections();
    await new Promise<void>((resolve) => (this.api ? this.api.close(() => resolve()) : resolve()));
  }
}

/** A browser's part of the sign-in, over plain HTTP: follows redirects by hand and keeps cookies. */
export class Browser {
  private readonly cookies = new Map<string, string>();

  /** `headers`: what this browser's requests carry besides cookies (e.g. the signing-in proxy's user header). */
  constructor(private readonly headers: Record<string, string> = {}) {}

  get(url: string) {
    return this.send(url);
  }

  /** A form post, as the browser sends one (urlencoded), with this browser's cookies. */
  post(url: string, fields: Record<string, string>) {
    return this.send(url, new URLSearchParams(fields).toString());
  }

  /** One request with this browser's cookies (redirects not followed); the cookies it sets are kept. */
  private async send(
    url: string,
    form?: string,
  ): Promise<{ status: number; location: string | undefined; text: string; url: string }> {
    const response = await fetch(url, {
      redirect: 'manual',
      // A page that never answers fails the sign-in instead of hanging whoever drives it.
      signal: AbortSignal.timeout(30_000),
      ...(form === undefined ? {} : { method: 'POST', body: form }),
      headers: {
        ...this.headers,
        ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        ...(this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
      },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const [name, ...value] = pair!.split('=');
      this.cookies.set(name!.trim(), value.join('='));
    }
    return {
      status: response.status,
      location: response.headers.get('location') ?? undefined,
      text: await response.text(),
      url,
    };
  }

  /**
   * Start -> provider -> callback; returns the callback URL and the final page. A chat link opened without a
   * web sign-in first asks "Connect … for @owner?": `confirm` clicks its button (as the person reading it would).
   */
  async signIn(
    connectUrl: string,
    options: { confirm?: boolean } = { confirm: true },
  ): Promise<{ callbackUrl: string; status: number; text: string; asked?: string }> {
    let start = await this.get(connectUrl);
    let asked: string | undefined;
    const form = /<form method="post" action="([^"]+\/start)">/.exec(start.text);
    const hidden = Object.fromEntries(
      [...start.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
        m[1]!,
        m[2]!,
      ]),
    );
    if (start.status === 200 && form) {
      asked = start.text;
      if (!options.confirm) return { callbackUrl: '', status: 200, text: start.text, asked };
      const unescape = (text: string) =>
        text
          .replace(/&amp;/g, '&')
          .replace(/&quot;/g, '"')
          .replace(/&#39;/g, "'");
      start = await this.post(
        unescape(form[1]!),
        Object.fromEntries(Object.entries(hidden).map(([k, v]) => [k, unescape(v)])),
      );
    }
    if (start.status !== 302 || !start.location)
      throw new Error(`start answered ${start.status}: ${start.text}`);
    const authorize = await this.get(start.location);
    if (authorize.status !== 302 || !authorize.location)
      throw new Error(`authorize answered ${authorize.status}: ${authorize.text}`);
    const callback = await this.get(authorize.location);
    return {
      callbackUrl: authorize.location,
      status: callback.status,
      text: callback.text,
      ...(asked ? { asked } : {}),
    };
  }
}
