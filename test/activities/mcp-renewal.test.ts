/**
 * A remote MCP server that refuses the token a pooled connection still holds, when the person's credential was
 * renewed since (by another call, another worker): the call goes on with the stored token, and nothing is refreshed
 * again. A real OAuth provider, a real MCP server over HTTP checking its tokens, the real credential service.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpPool } from '../../activities/mcp/pool';
import type { McpServerConfig } from '../../infra/config';
import { resolveProviders } from '../../infra/credentials/providers';
import { CredentialService } from '../../infra/credentials/service';
import { tempDir } from '../helpers/config';
import { RemoteMcpServer } from '../helpers/mcp-http-server';
import { CLIENT_ID, CLIENT_SECRET, TestOAuthProvider } from '../helpers/oauth-provider';

let provider: TestOAuthProvider;
let remote: RemoteMcpServer;
let credentials: CredentialService;
let pool: McpPool;

beforeAll(async () => {
  provider = await new TestOAuthProvider().start();
  remote = await new RemoteMcpServer(provider.issuer).start();
  credentials = new CredentialService(
    resolveProviders(
      { acme: { type: 'oauth2', issuer: provider.issuer } },
      { OAUTH_ACME_CLIENT_ID: CLIENT_ID, OAUTH_ACME_CLIENT_SECRET: CLIENT_SECRET },
    ),
    { vaultPath: path.join(tempDir(), 'vault.sqlite'), vaultKey: undefined },
  );
  const config = {
    remote: { url: remote.url, auth: 'acme', tools: {}, trustAnnotations: true },
  } as unknown as Record<string, McpServerConfig>;
  pool = new McpPool(config, () => credentials);
});

afterAll(async () => {
  await pool?.close();
  await credentials?.close();
  await remote?.stop();
  await provider?.stop();
});

const whoami = () => pool.call('remote', 'whoami', {}, 'alice', new AbortController().signal);
const refreshes = () => provider.grants.filter((g) => g === 'refresh_token').length;
/** Makes alice's stored token due for renewal and has the service renew it: the new access token. */
async function renewStored(): Promise<string> {
  const stored = (await credentials.vault.get('alice', 'acme'))!;
  await credentials.storeTokens('alice', 'acme', {
    accessToken: stored.accessToken,
    refreshToken: stored.refreshToken ?? 'refresh-1',
    tokenType: 'Bearer',
    scope: undefined,
    expiresAt: Date.now() + 5_000,
  });
  const auth = await credentials.authorization('alice', 'acme');
  if (!auth.ok) throw new Error(auth.message);
  return auth.token;
}

describe('a pooled MCP connection with a token renewed since', () => {
  it('is refused, and the call goes on with the stored token without refreshing it again', async () => {
    await credentials.storeTokens('alice', 'acme', {
      accessToken: 'not-yet',
      refreshToken: 'refresh-1',
      tokenType: 'Bearer',
      scope: undefined,
      expiresAt: Date.now() + 5_000,
    });
    expect(await whoami()).toMatchObject({ status: 'ok', content: expect.stringMatching(/^you are /) });
    const pooled = [...remote.tokensSeen];
    expect(pooled).toHaveLength(1);

    // Renewed elsewhere; then the server stops taking the old one (rotation on its side).
    const renewed = await renewStored();
    expect(renewed).not.toBe(pooled[0]);
    remote.revoked.add(pooled[0]!);
    const before = refreshes();

    expect(await whoami()).toMatchObject({ status: 'ok', content: expect.stringMatching(/^you are /) });
    // The stored token was the answer: no refresh spent on it, and it is still the one stored.
    expect(refreshes()).toBe(before);
    expect((await credentials.vault.get('alice', 'acme'))!.accessToken).toBe(renewed);
    expect(remote.tokensSeen).toContain(renewed);

    // The stored token refused too: that one is renewed, once, as before.
    remote.revoked.add(renewed);
    expect(await whoami()).toMatchObject({ status: 'ok' });
    expect(refreshes()).toBe(before + 1);
  });

  it('renews the token stored since when the server refuses it as well, and nobody is asked to sign in', async () => {
    const pooled = (await credentials.vault.get('alice', 'acme'))!.accessToken;
    expect(await whoami()).toMatchObject({ status: 'ok' });
    const stored = await renewStored();
    remote.revoked.add(pooled);
    remote.revoked.add(stored);
    const before = refreshes();
    expect(await whoami()).toMatchObject({ status: 'ok', content: expect.stringMatching(/^you are /) });
    expect(refreshes()).toBe(before + 1);
    const now = (await credentials.vault.get('alice', 'acme'))!.accessToken;
    expect([pooled, stored]).not.toContain(now);
  });
});
