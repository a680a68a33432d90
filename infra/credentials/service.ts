/**
 * The credential service the worker and the gateway share: providers, the vault and their OAuth clients.
 * `authorization()` is what a tool needs at run time: the header to send, refreshed first when the token
 * is about to expire (one refresh at a time per credential, in this process and across processes).
 */
import { ResponseBodyError } from 'openid-client';
import path from 'node:path';
import type { AppConfig } from '../config';
import { deriveKeys, loadMasterKey, type VaultKeys } from './keys';
import { OAuthClient, type TokenResult } from './oauth';
import { PgVault } from './pg-vault';
import type { Provider } from './providers';
import { SqliteVault } from './sqlite-vault';
import { UnreadableCredential, type Credential, type Vault } from './vault';

/** Refresh a token this long before it expires. */
const REFRESH_MARGIN_MS = 60_000;
const REFRESH_WAIT_MS = 30_000;

export type Authorization =
  | {
      ok: true;
      header: string;
      value: string;
      /** The token itself, for a tool server process that takes it in its environment (`tokenEnv`). */
      token: string;
    }
  | {
      ok: false;
      /** `unreadable`: the stored credential did not decrypt (another VAULT_KEY, corruption) and was removed. */
      reason: 'not_connected' | 'unknown_provider' | 'refresh_failed' | 'unreadable';
      message: string;
    };

export class CredentialService {
  readonly vault: Vault;
  readonly keys: VaultKeys;
  private readonly clients = new Map<string, OAuthClient>();
  private readonly refreshing = new Map<string, Promise<Credential | undefined>>();

  constructor(
    readonly providers: Record<string, Provider>,
    options: {
      vaultPath: string;
      vaultKey: string | undefined;
      /** PostgreSQL instead of the SQLite file at vaultPath (then vaultKey is required: see config). */
      databaseUrl?: string | undefined;
      publicUrl?: string;
    },
  ) {
    // The generated key file sits next to the vault, so every process sharing the vault shares the key.
    this.keys = deriveKeys(
      loadMasterKey({ vaultKey: options.vaultKey, dataDir: path.dirname(options.vaultPath) }),
    );
    this.vault = options.databaseUrl
      ? new PgVault(options.databaseUrl, this.keys.encryption)
      : new SqliteVault(options.vaultPath, this.keys.encryption);
    this.publicUrl = options.publicUrl?.replace(/\/$/, '');
  }

  /** The gateway's public address: sign-in callbacks are registered under it. */
  private readonly publicUrl: string | undefined;

  static fromConfig(config: AppConfig): CredentialService {
    return new CredentialService(config.credentials.providers, {
      ...config.credentials,
      publicUrl: config.publicUrl,
    });
  }

  provider(name: string): Provider | undefined {
    return Object.hasOwn(this.providers, name) ? this.providers[name] : undefined;
  }

  client(name: string): OAuthClient | undefined {
    const provider = this.provider(name);
    if (provider?.kind !== 'oauth2') return undefined;
    let client = this.clients.get(name);
    if (!client) {
      const redirectUri = this.publicUrl && `${this.publicUrl}/oauth/${name}/callback`;
      client = new OAuthClient(provider, { vault: this.vault, redirectUri });
      this.clients.set(name, client);
    }
    return client;
  }

  /** Resolves once the vault is open (PostgreSQL: reachable and migrated). */
  ready(): Promise<void> {
    return this.vault.ready();
  }

  async storeTokens(userId: string, provider: string, tokens: TokenResult): Promise<void> {
    await this.vault.put(
      userId,
      provider,
      {
        accessToken: tokens.accessToken,
        ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
        ...(tokens.tokenType ? { tokenType: tokens.tokenType } : {}),
        ...(tokens.scope ? { scope: tokens.scope } : {}),
      },
      tokens.expiresAt,
    );
  }

  async authorization(userId: string, providerName: string): Promise<Authorization> {
    const provider = this.provider(providerName);
    if (!provider)
      return {
        ok: false,
        reason: 'unknown_provider',
        message: `no credential provider "${providerName}" is configured`,
      };
    try {
      return await this.authorize(userId, providerName, provider);
    } catch (error) {
      // The store removed the row as it read it, so the person hears this once and then connects again.
      if (!(error instanceof UnreadableCredential)) throw error;
      return {
        ok: false,
        reason: 'unreadable',
        message: `your stored ${provider.displayName} sign-in could not be read and was removed; connect again`,
      };
    }
  }

  private async authorize(userId: string, providerName: string, provider: Provider): Promise<Authorization> {
    let credential = await this.vault.get(userId, providerName);
    if (!credential)
      return { ok: false, reason: 'not_connected', message: `${provider.displayName} is not connected` };
    if (
      provider.kind === 'oauth2' &&
      credential.expiresAt !== null &&
      credential.expiresAt - Date.now() < REFRESH_MARGIN_MS
    ) {
      credential = await this.refreshOnce(userId, providerName, credential);
      if (!credential)
        return {
          ok: false,
          reason: 'refresh_failed',
          message: `the ${provider.displayName} sign-in has expired and could not be renewed; sign in again`,
        };
    }
    const token = credential.accessToken;
    if (provider.kind === 'api_key')
      return { ok: true, header: provider.header, value: `${provider.prefix}${token}`, token };
    return { ok: true, header: 'Authorization', value: `Bearer ${token}`, token };
  }

  private refreshOnce(userId: string, provider: string, stale: Credential): Promise<Credential | undefined> {
    const key = `${userId}\n${provider}`;
    let pending = this.refreshing.get(key);
    if (!pending) {
      pending = this.refresh(userId, provider, stale).finally(() => this.refreshing.delete(key));
      this.refreshing.set(key, pending);
    }
    return pending;
  }

  private async refresh(
    userId: string,
    provider: string,
    stale: Credential,
  ): Promise<Credential | undefined> {
    const client = this.client(provider);
    if (!client || !stale.refreshToken) return stale.expiresAt! > Date.now() ? stale : undefined;
    const renewed = (current: Credential) => current.updatedAt !== stale.updatedAt;
    const claim = await this.vault.claimRefresh(userId, provider);
    if (!claim) {
      // Another process is refreshing: wait for its result rather than spend the refresh token twice.
      const deadline = Date.now() + REFRESH_WAIT_MS;
      while (Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const current = await this.vault.get(userId, provider);
        if (!current) return undefined;
        if (renewed(current)) return current;
      }
      return undefined;
    }
    try {
      // Another process may have refreshed between our read and our claim: its token is the one to use.
      const current = await this.vault.get(userId, provider);
      if (!current) return undefined;
      if (renewed(current)) return current;
      await this.storeTokens(userId, provider, await client.refresh(stale.refreshToken));
      return await this.vault.get(userId, provider);
    } catch (error) {
      if (error instanceof UnreadableCredential) throw error;
      // A refused refresh token (revoked, expired) means the person must sign in again; a provider that
      // is merely unreachable keeps the credential for the next try.
      if (error instanceof ResponseBodyError && error.error === 'invalid_grant')
        await this.vault.delete(userId, provider);
      return undefined;
    } finally {
      await claim.release();
    }
  }

  /**
   * A server refused the access token before its expiry (revoked or rotated on its side): renewed with the refresh
   * token, once (shared with any refresh under way). `renewed` when a new token is stored; false sends the person
   * to sign in again. `refused`: the token the server refused, when known. Another one stored since (renewed by
   * another call or worker) is the answer as it is (`stored since`): refreshing it too would spend a refresh on a
   * token nobody has tried.
   */
  async renewRejected(
    userId: string,
    providerName: string,
    refused?: string,
  ): Promise<'renewed' | 'stored since' | false> {
    const provider = this.provider(providerName);
    if (provider?.kind !== 'oauth2') return false;
    const stale = await this.vault.get(userId, providerName).catch(() => undefined);
    if (stale && refused !== undefined && stale.accessToken !== refused) return 'stored since';
    if (!stale?.refreshToken) return false;
    const renewed = await this.refreshOnce(userId, providerName, stale);
    return !!renewed && renewed.updatedAt !== stale.updatedAt && 'renewed';
  }

  async disconnect(userId: string, provider: string): Promise<boolean> {
    const credential = await this.vault.get(userId, provider).catch((error: unknown) => {
      if (error instanceof UnreadableCredential) return 'removed' as const; // nothing readable to revoke
      throw error;
    });
    if (credential === 'removed') return true;
    if (!credential) return false;
    await this.client(provider)
      ?.revoke(credential.refreshToken ?? credential.accessToken)
      .catch(() => {}); // revocation is best effort; the local copy goes regardless
    return await this.vault.delete(userId, provider);
  }

  async close(): Promise<void> {
    await this.vault.close();
  }
}
