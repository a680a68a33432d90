/** The vault, its keys, signed tickets and state, provider configuration, and token refresh against a real provider. */
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKeys, loadMasterKey } from '../../infra/credentials/keys';
import { resolveProviders } from '../../infra/credentials/providers';
import { CredentialService } from '../../infra/credentials/service';
import { signState, signTicket, verifyState, verifyTicket } from '../../infra/credentials/signed';
import { SqliteVault } from '../../infra/credentials/sqlite-vault';
import { tempDir } from '../helpers/config';
import { CLIENT_ID, CLIENT_SECRET, TestOAuthProvider } from '../helpers/oauth-provider';

describe('vault keys', () => {
  it('generates an owner-only key file once, and refuses one that others can read', () => {
    const dataDir = tempDir();
    const key = loadMasterKey({ vaultKey: undefined, dataDir });
    expect(key).toHaveLength(32);
    const file = path.join(dataDir, 'vault.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadMasterKey({ vaultKey: undefined, dataDir }).equals(key)).toBe(true);
    chmodSync(file, 0o644);
    expect(() => loadMasterKey({ vaultKey: undefined, dataDir })).toThrow(/chmod 600/);
  });

  it('takes VAULT_KEY as hex or base64 and rejects a wrong length', () => {
    const hex = 'ab'.repeat(32);
    expect(loadMasterKey({ vaultKey: hex, dataDir: tempDir() }).toString('hex')).toBe(hex);
    expect(
      loadMasterKey({ vaultKey: Buffer.alloc(32, 7).toString('base64'), dataDir: tempDir() }),
    ).toHaveLength(32);
    expect(() => loadMasterKey({ vaultKey: 'short', dataDir: tempDir() })).toThrow(/32 bytes/);
  });
});

describe('vault', () => {
  const keys = deriveKeys(Buffer.alloc(32, 1));

  it('stores secrets encrypted, bound to their row, and decrypts them back', async () => {
    const file = path.join(tempDir(), 'vault.sqlite');
    const vault = new SqliteVault(file, keys.encryption);
    await vault.put(
      'alice',
      'acme',
      { accessToken: 'plain-access-token-123', refreshToken: 'plain-refresh-456' },
      1_000,
    );
    await vault.put('bob', 'acme', { accessToken: 'bobs-token-789' }, null);
    expect(await vault.get('alice', 'acme')).toMatchObject({
      accessToken: 'plain-access-token-123',
      expiresAt: 1_000,
    });
    await vault.close(); // checkpoints the write-ahead log into the file
    const bytes = readFileSync(file).toString('latin1');
    for (const secret of ['plain-access-token-123', 'plain-refresh-456', 'bobs-token-789'])
      expect(bytes).not.toContain(secret);
    // Moving alice's ciphertext into bob's row does not give bob alice's token: authentication fails.
    const db = new DatabaseSync(file);
    db.exec(
      "UPDATE credentials SET secret = (SELECT secret FROM credentials WHERE user_id = 'alice') WHERE user_id = 'bob'",
    );
    db.close();
    const reopened = new SqliteVault(file, keys.encryption);
    await expect(reopened.get('bob', 'acme')).rejects.toThrow();
    // And a different key cannot read anything.
    const wrongKey = new SqliteVault(file, deriveKeys(Buffer.alloc(32, 2)).encryption);
    await expect(wrongKey.get('alice', 'acme')).rejects.toThrow();
    await reopened.close();
    await wrongKey.close();
  });

  it('hands an OAuth flow out once, and only to the browser that started it', async () => {
    const vault = new SqliteVault(path.join(tempDir(), 'vault.sqlite'), keys.encryption);
    await vault.saveFlow({
      id: 'f'.repeat(32),
      userId: 'alice',
      provider: 'acme',
      verifier: 'v'.repeat(43),
      browserHash: 'h1',
      expiresAt: Date.now() + 60_000,
    });
    expect(await vault.consumeFlow('f'.repeat(32), 'other')).toEqual({ status: 'other_browser' });
    expect(await vault.consumeFlow('f'.repeat(32), 'h1')).toMatchObject({
      status: 'ok',
      flow: { userId: 'alice', verifier: 'v'.repeat(43) },
    });
    expect(await vault.consumeFlow('f'.repeat(32), 'h1')).toEqual({ status: 'used' });
    expect(await vault.consumeFlow('x'.repeat(32), 'h1')).toEqual({ status: 'unknown' });
    await vault.close();
  });
});

describe('signed tickets and state', () => {
  const { signing } = deriveKeys(Buffer.alloc(32, 3));
  it('verifies, expires and refuses tampering', () => {
    const ticket = signTicket(signing, { userId: 'alice', provider: 'acme', expiresAt: Date.now() + 60_000 });
    expect(verifyTicket(signing, ticket)).toMatchObject({
      ok: true,
      value: { userId: 'alice', provider: 'acme' },
    });
    const [body, mac] = ticket.split('.');
    const forgedBody = Buffer.from(
      JSON.stringify({ u: 'mallory', p: 'acme', e: Date.now() + 60_000 }),
    ).toString('base64url');
    expect(verifyTicket(signing, `${forgedBody}.${mac}`)).toEqual({ ok: false, reason: 'invalid' });
    expect(verifyTicket(signing, `${body}.${mac}x`)).toEqual({ ok: false, reason: 'invalid' });
    expect(verifyTicket(deriveKeys(Buffer.alloc(32, 4)).signing, ticket)).toEqual({
      ok: false,
      reason: 'invalid',
    });
    expect(
      verifyTicket(signing, signTicket(signing, { userId: 'a', provider: 'b', expiresAt: Date.now() - 1 })),
    ).toEqual({ ok: false, reason: 'expired' });
    // A state is not a ticket, and the other way round.
    const state = signState(signing, 'f'.repeat(32), Date.now() + 60_000);
    expect(verifyState(signing, state)).toMatchObject({ ok: true, value: { flowId: 'f'.repeat(32) } });
    expect(verifyTicket(signing, state).ok).toBe(false);
    expect(verifyState(signing, ticket).ok).toBe(false);
  });
});

describe('provider configuration', () => {
  it('fills presets, reads secrets from the environment and explains what is missing', () => {
    const providers = resolveProviders(
      { github: { type: 'oauth2', preset: 'github' }, weather: { type: 'api_key', header: 'Authorization' } },
      { OAUTH_GITHUB_CLIENT_ID: 'gh-id', OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret' },
    );
    expect(providers.github).toMatchObject({
      kind: 'oauth2',
      displayName: 'GitHub',
      authorizeUrl: 'https://github.com/login/oauth/authorize',
      clientId: 'gh-id',
      clientSecret: 'gh-secret',
      pkce: true,
    });
    expect(providers.weather).toMatchObject({ kind: 'api_key', prefix: 'Bearer ' });
    expect(() => resolveProviders({ github: { type: 'oauth2', preset: 'github' } }, {})).toThrow(
      /OAUTH_GITHUB_CLIENT_ID/,
    );
    expect(() => resolveProviders({ x: { type: 'oauth2', clientId: 'id' } }, {})).toThrow(/issuer/);
  });
});

describe('token refresh against a real provider', () => {
  let provider: TestOAuthProvider;
  beforeAll(async () => {
    provider = await new TestOAuthProvider().start();
  });
  afterAll(async () => {
    await provider.stop();
  });

  function service() {
    const dataDir = tempDir();
    return new CredentialService(
      resolveProviders(
        { acme: { type: 'oauth2', issuer: provider.issuer } },
        { OAUTH_ACME_CLIENT_ID: CLIENT_ID, OAUTH_ACME_CLIENT_SECRET: CLIENT_SECRET },
      ),
      { vaultPath: path.join(dataDir, 'vault.sqlite'), vaultKey: undefined },
    );
  }

  it('refreshes an expiring token before use, once for concurrent callers', async () => {
    const credentials = service();
    await credentials.storeTokens('alice', 'acme', {
      accessToken: 'old-access',
      refreshToken: 'refresh-1',
      tokenType: 'Bearer',
      scope: undefined,
      expiresAt: Date.now() + 5_000,
    });
    const before = provider.grants.filter((g) => g === 'refresh_token').length;
    const results = await Promise.all([1, 2, 3].map(() => credentials.authorization('alice', 'acme')));
    expect(provider.grants.filter((g) => g === 'refresh_token').length - before).toBe(1);
    const values = new Set(results.map((r) => (r.ok ? r.value : r.message)));
    expect(values.size).toBe(1);
    expect([...values][0]).toMatch(/^Bearer ey/); // a fresh JWT from the provider, not "old-access"
    const stored = (await credentials.vault.get('alice', 'acme'))!;
    expect(stored.expiresAt! - Date.now()).toBeGreaterThan(60_000);
    await credentials.close();
  });

  it('forgets a credential whose refresh is refused, so the person is asked to sign in again', async () => {
    const credentials = service();
    await credentials.storeTokens('bob', 'acme', {
      accessToken: 'old',
      refreshToken: 'revoked',
      tokenType: 'Bearer',
      scope: undefined,
      expiresAt: Date.now() - 1,
    });
    provider.failNextToken();
    expect(await credentials.authorization('bob', 'acme')).toMatchObject({
      ok: false,
      reason: 'refresh_failed',
    });
    expect(await credentials.vault.has('bob', 'acme')).toBe(false);
    expect(await credentials.authorization('bob', 'acme')).toMatchObject({
      ok: false,
      reason: 'not_connected',
    });
    await credentials.close();
  });
});

describe('an existing key file', () => {
  it('is used as it is, never overwritten', () => {
    const dataDir = tempDir();
    writeFileSync(path.join(dataDir, 'vault.key'), Buffer.alloc(32, 9).toString('base64'), { mode: 0o600 });
    expect(loadMasterKey({ vaultKey: undefined, dataDir }).equals(Buffer.alloc(32, 9))).toBe(true);
  });
});
