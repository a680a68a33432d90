/**
 * MCP authorization discovery against servers that speak the protocols over HTTP: a protected MCP
 * endpoint (401 + WWW-Authenticate), its protected-resource metadata, and an authorization server's
 * metadata and registration endpoint. Each misconfiguration ends in a message that says what to fix.
 */
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  discoverMcpAuthorization,
  insufficientScopeOf,
  McpAuthorizationError,
} from '../../infra/credentials/mcp-authorization';
import { resolveMcpProviders, type OAuthProvider } from '../../infra/credentials/providers';
import { SqliteVault } from '../../infra/credentials/sqlite-vault';
import { tempDir, testConfig } from '../helpers/config';

/** What the fake servers answer; each test shapes it. */
let shape: {
  resource?: string;
  pkce: boolean;
  registration: boolean;
  challengeScope?: string;
};
let registrations = 0;
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/mcp' && req.method === 'POST') {
      const scope = shape.challengeScope ? `, scope="${shape.challengeScope}"` : '';
      res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${base}/meta/prm"${scope}` });
      return res.end();
    }
    if (req.url === '/meta/prm')
      return json(200, {
        resource: shape.resource ?? `${base}/mcp`,
        authorization_servers: [`${base}/as`],
        scopes_supported: ['files.read', 'files.write'],
      });
    if (req.url === '/.well-known/oauth-authorization-server/as')
      return json(200, {
        issuer: `${base}/as`,
        authorization_endpoint: `${base}/as/authorize`,
        token_endpoint: `${base}/as/token`,
        response_types_supported: ['code'],
        ...(shape.pkce ? { code_challenge_methods_supported: ['S256'] } : {}),
        ...(shape.registration ? { registration_endpoint: `${base}/as/register` } : {}),
      });
    if (req.url === '/as/register' && req.method === 'POST') {
      registrations++;
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk));
      req.on('end', () => json(201, { ...JSON.parse(raw), client_id: `registered-${registrations}` }));
      return;
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  shape = { pkce: true, registration: true };
  registrations = 0;
});

const provider = (): OAuthProvider =>
  resolveMcpProviders({ files: { url: `${base}/mcp` } }, {}, {})['mcp-files'] as OAuthProvider;

const options = () => ({
  redirectUri: 'https://agent.example/oauth/mcp-files/callback',
  vault: new SqliteVault(path.join(tempDir(), 'vault.sqlite'), Buffer.alloc(32, 3)),
});

describe('MCP authorization discovery', () => {
  it("follows the 401 challenge to the server's metadata, registers one client, and keeps it", async () => {
    const opts = options();
    shape.challengeScope = 'files.read';
    const found = await discoverMcpAuthorization(provider(), opts);
    expect(found).toMatchObject({
      resource: `${base}/mcp`,
      scopes: ['files.read'], // the challenge's scope beats the metadata's list
      client: { clientId: 'registered-1' },
      metadata: { token_endpoint: `${base}/as/token` },
    });
    expect((await discoverMcpAuthorization(provider(), opts)).client.clientId).toBe('registered-1');
    expect(registrations).toBe(1);
  });

  it('uses a configured client instead of registering one', async () => {
    const found = await discoverMcpAuthorization(
      { ...provider(), clientId: 'configured', clientSecret: 'from-env' },
      options(),
    );
    expect(found.client).toEqual({ clientId: 'configured', clientSecret: 'from-env' });
    expect(registrations).toBe(0);
  });

  it('says how to configure a client when the authorization server cannot register one', async () => {
    shape.registration = false;
    const failure = discoverMcpAuthorization(provider(), options());
    await expect(failure).rejects.toBeInstanceOf(McpAuthorizationError);
    await expect(failure).rejects.toThrow(/"oauth": \{"clientId"[^]*OAUTH_MCP_FILES_CLIENT_SECRET/);
  });

  it('refuses an authorization server without PKCE, and metadata for another resource', async () => {
    shape.pkce = false;
    await expect(discoverMcpAuthorization(provider(), options())).rejects.toThrow(/PKCE/);
    shape = { pkce: true, registration: true, resource: 'https://elsewhere.example/mcp' };
    await expect(discoverMcpAuthorization(provider(), options())).rejects.toThrow(/another resource/);
    expect(registrations).toBe(0);
  });

  it('says the server cannot be reached when it is down', async () => {
    await expect(
      discoverMcpAuthorization({ ...provider(), mcpServerUrl: 'http://127.0.0.1:9/mcp' }, options()),
    ).rejects.toThrow(/cannot be reached/);
  });
});

describe('configuration of remote MCP servers', () => {
  it("reads a 403's scope step-up, and nothing else, as scopes to ask for", async () => {
    const answer = (status: number, challenge?: string) =>
      new Response(null, { status, headers: challenge ? { 'www-authenticate': challenge } : {} });
    expect(
      await insufficientScopeOf(
        answer(
          403,
          'Bearer error="insufficient_scope", scope="files.read files.write", resource_metadata="x"',
        ),
      ),
    ).toEqual(['files.read', 'files.write']);
    expect(await insufficientScopeOf(answer(403, 'Bearer error="insufficient_scope"'))).toEqual([]);
    // A plain refusal, a 401 or a success asks for nothing.
    expect(await insufficientScopeOf(answer(403, 'Bearer error="invalid_token"'))).toBeUndefined();
    expect(await insufficientScopeOf(answer(403))).toBeUndefined();
    expect(
      await insufficientScopeOf(answer(401, 'Bearer error="insufficient_scope", scope="a"')),
    ).toBeUndefined();
    expect(await insufficientScopeOf(answer(200))).toBeUndefined();
  });

  it('gives every remote server without "auth" its own mcp-<server> provider', () => {
    const config = testConfig(
      {
        mcpServers: {
          files: { url: 'https://files.example/mcp', oauth: { scopes: ['files.read'] } },
          local: { command: 'node', args: ['server.mjs'] },
        },
      },
      { OAUTH_MCP_FILES_CLIENT_SECRET: 'secret-from-env' },
    );
    expect(config.credentials.providers['mcp-files']).toMatchObject({
      kind: 'oauth2',
      displayName: 'Files (MCP)',
      clientId: undefined,
      clientSecret: 'secret-from-env',
      scopes: ['files.read'],
      mcpServerUrl: 'https://files.example/mcp',
    });
    expect(config.credentials.providers['mcp-local']).toBeUndefined();
  });

  it('refuses "oauth" beside "auth", and a remote name too long for its provider', () => {
    const load = (mcpServers: unknown) => () => testConfig({ mcpServers });
    expect(load({ x: { url: 'https://x.example/mcp', auth: 'github', oauth: {} } })).toThrow(
      /cannot go with "auth"/,
    );
    expect(load({ ['a'.repeat(30)]: { url: 'https://x.example/mcp' } })).toThrow(/at most 28 characters/);
  });
});
