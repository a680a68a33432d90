/**
 * A remote MCP server over Streamable HTTP (official SDK, stateless), protected by OAuth: every request
 * needs a bearer token issued by the test OAuth provider (checked against its JWKS with jose), as the MCP
 * authorization spec describes; without one it answers 401 with a WWW-Authenticate challenge.
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

  constructor(private readonly issuer: string) {}

  async start(): Promise<this> {
    const jwks = createRemoteJWKSet(new URL(`${this.issuer}/jwks`));
    this.server = createServer((req, res) => {
      void (async () => {
        const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
        let subject: string;
        try {
          subject = String((await jwtVerify(token, jwks, { issuer: this.issuer })).payload.sub);
          this.tokensSeen.add(token);
        } catch {
          res
            .writeHead(401, {
              'www-authenticate': `Bearer resource_metadata="${this.url}/.well-known/oauth-protected-resource"`,
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
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/mcp`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
