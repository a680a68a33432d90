/**
 * A remote MCP server over Streamable HTTP (official SDK, stateless), protected by OAuth: every request
 * needs a bearer token issued by the test OAuth provider (checked against its JWKS with jose), as the MCP
 * authorization spec describes; without one it answers 401 with a WWW-Authenticate challenge naming its
 * protected-resource metadata (RFC 9728), served at that (non-well-known) address only, so a client must
 * follow the challenge. With `audience`, it takes only tokens issued for itself (RFC 8707).
 */
import { createServer, type Server } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createRemoteJWKSet, jwtVerify } from 'jose';

export class RemoteMcpServer {
  private server: Server | undefined;
  url = '';
  /** Bearer tokens this server accepted (a test proves none leaks). */
  readonly tokensSeen = new Set<string>();

  /** Bearer tokens refused (a revoked token, say): the next request with one of these gets a 401. */
  readonly revoked = new Set<string>();
  /** Every token refused, fresh ones too (the account was removed on the server's side). */
  refuseAll = false;

  constructor(
    private readonly issuer: string,
    private readonly options: {
      audience?: boolean;
      scopes?: string[];
      /** No sign-in at all: every request is served, as "anonymous". */
      open?: boolean;
      port?: number;
    } = {},
  ) {}

  get metadataUrl(): string {
    return `${this.url}/.well-known/oauth-protected-resource`;
  }

  async start(): Promise<this> {
    const jwks = createRemoteJWKSet(new URL(`${this.issuer}/jwks`));
    this.server = createServer((req, res) => {
      void (async () => {
        if (req.method === 'GET' && req.url === new URL(this.metadataUrl).pathname) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              resource: this.url,
              authorization_servers: [this.issuer],
              scopes_supported: this.options.scopes ?? [],
              bearer_methods_supported: ['header'],
            }),
          );
          return;
        }
        const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
        let subject = 'anonymous';
        if (!this.options.open)
          try {
            if (this.refuseAll || this.revoked.has(token)) throw new Error('revoked');
            const verified = await jwtVerify(token, jwks, {
              issuer: this.issuer,
              ...(this.options.audience ? { audience: this.url } : {}),
            });
            subject = String(verified.payload.sub);
            this.tokensSeen.add(token);
          } catch {
            const scope = this.options.scopes?.length ? `, scope="${this.options.scopes.join(' ')}"` : '';
            res
              .writeHead(401, {
                'www-authenticate': `Bearer resource_metadata="${this.metadataUrl}"${scope}`,
              })
              .end('unauthorized');
            return;
          }
        const mcp = new McpServer({ name: 'remote', version: '1.0.0' });
        mcp.registerTool(
          'whoami',
          { description: 'Who the token belongs to', inputSchema: {}, annotations: { readOnlyHint: true } },
          async () => ({ content: [{ type: 'text', text: `you are ${subject}` }] }),
        );
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on('close', () => {
          void transport.close();
          void mcp.close();
        });
        await mcp.connect(transport);
        let raw = '';
        for await (const chunk of req) raw += chunk;
        await transport.handleRequest(req, res, raw ? JSON.parse(raw) : undefined);
      })().catch(() => res.writeHead(500).end());
    });
    await new Promise<void>((resolve) => this.server!.listen(this.options.port ?? 0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/mcp`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
