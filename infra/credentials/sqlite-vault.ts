/**
 * The vault in an embedded SQLite file (VAULT_PATH, default DATA_DIR/vault.sqlite): the default for one
 * machine (`npm start`). Processes on that machine share it; one refresh at a time is a lease column.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import {
  FLOW_RETENTION_MS,
  VaultCipher,
  type ConsumedFlow,
  type Credential,
  type OAuthFlow,
  type RefreshClaim,
  type RegisteredClient,
  type StoredSecret,
  type Vault,
  UnreadableCredential,
} from './vault';

/** A refresher that died holding the lease blocks others this long at most. */
const REFRESH_LEASE_MS = 30_000;

export class SqliteVault implements Vault {
  private readonly db: DatabaseSync;
  private readonly cipher: VaultCipher;

  constructor(
    file: string,
    key: Buffer,
    private readonly now: () => number = Date.now,
  ) {
    this.cipher = new VaultCipher(key);
    mkdirSync(path.dirname(file), { recursive: true });
    this.db = new DatabaseSync(file);
    this.db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA busy_timeout = 5000;
      CREATE TABLE IF NOT EXISTS credentials (
        user_id TEXT NOT NULL,
        provider TEXT NOT NULL,
        secret BLOB NOT NULL,
        expires_at INTEGER,
        updated_at INTEGER NOT NULL,
        refreshing_until INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (user_id, provider)
      );
      CREATE TABLE IF NOT EXISTS oauth_flows (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        provider TEXT NOT NULL,
        verifier BLOB NOT NULL,
        browser_hash TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
      );
      CREATE TABLE IF NOT EXISTS used_tickets (
        nonce TEXT PRIMARY KEY,
        expires_at INTEGER NOT NULL
      );
      CREATE TABLE IF NOT EXISTS oauth_clients (
        provider TEXT NOT NULL,
        authorization_server TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        client BLOB NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (provider, authorization_server, redirect_uri)
      );
    `);
  }

  async ready(): Promise<void> {}

  async put(userId: string, provider: string, secret: StoredSecret, expiresAt: number | null): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO credentials (user_id, provider, secret, expires_at, updated_at, refreshing_until)
         VALUES (?, ?, ?, ?, ?, 0)
         ON CONFLICT (user_id, provider) DO UPDATE SET secret = excluded.secret, expires_at = excluded.expires_at,
           updated_at = excluded.updated_at, refreshing_until = 0`,
      )
      .run(
        userId,
        provider,
        this.cipher.seal(JSON.stringify(secret), VaultCipher.credentialContext(userId, provider)),
        expiresAt,
        this.now(),
      );
  }

  async get(userId: string, provider: string): Promise<Credential | undefined> {
    const row = this.db
      .prepare('SELECT secret, expires_at, updated_at FROM credentials WHERE user_id = ? AND provider = ?')
      .get(userId, provider) as
      { secret: Uint8Array; expires_at: number | null; updated_at: number } | undefined;
    if (!row) return undefined;
    const secret = this.cipher.openJson<StoredSecret>(
      row.secret,
      VaultCipher.credentialContext(userId, provider),
    );
    if (!secret) {
      // Only this unreadable row: a sign-in that replaced it meanwhile stays.
      this.db
        .prepare('DELETE FROM credentials WHERE user_id = ? AND provider = ? AND secret = ?')
        .run(userId, provider, row.secret);
      throw new UnreadableCredential(userId, provider, { cause: 'decryption failed' });
    }
    return { ...secret, userId, provider, expiresAt: row.expires_at, updatedAt: row.updated_at };
  }

  async has(userId: string, provider: string): Promise<boolean> {
    return (
      this.db
        .prepare('SELECT 1 FROM credentials WHERE user_id = ? AND provider = ?')
        .get(userId, provider) !== undefined
    );
  }

  async delete(userId: string, provider: string): Promise<boolean> {
    return (
      this.db.prepare('DELETE FROM credentials WHERE user_id = ? AND provider = ?').run(userId, provider)
        .changes > 0
    );
  }

  async connected(
    userId: string,
  ): Promise<{ provider: string; expiresAt: number | null; updatedAt: number }[]> {
    return (
      this.db
        .prepare(
          'SELECT provider, expires_at, updated_at FROM credentials WHERE user_id = ? ORDER BY provider',
        )
        .all(userId) as { provider: string; expires_at: number | null; updated_at: number }[]
    ).map((r) => ({ provider: r.provider, expiresAt: r.expires_at, updatedAt: r.updated_at }));
  }

  async claimRefresh(userId: string, provider: string): Promise<RefreshClaim | undefined> {
    const now = this.now();
    const claimed =
      this.db
        .prepare(
          'UPDATE credentials SET refreshing_until = ? WHERE user_id = ? AND provider = ? AND refreshing_until < ?',
        )
        .run(now + REFRESH_LEASE_MS, userId, provider, now).changes === 1;
    if (!claimed) return undefined;
    return {
      release: async () => {
        this.db
          .prepare('UPDATE credentials SET refreshing_until = 0 WHERE user_id = ? AND provider = ?')
          .run(userId, provider);
      },
    };
  }

  async consumeTicket(nonce: string, expiresAt: number): Promise<boolean> {
    this.db.prepare('DELETE FROM used_tickets WHERE expires_at < ?').run(this.now());
    const inserted = this.db
      .prepare('INSERT INTO used_tickets (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING')
      .run(nonce, expiresAt);
    return inserted.changes === 1;
  }

  async saveFlow(flow: OAuthFlow): Promise<void> {
    this.db
      .prepare(
        'INSERT INTO oauth_flows (id, user_id, provider, verifier, browser_hash, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(
        flow.id,
        flow.userId,
        flow.provider,
        this.cipher.seal(flow.verifier, VaultCipher.flowContext(flow.id)),
        flow.browserHash,
        flow.expiresAt,
      );
    this.db.prepare('DELETE FROM oauth_flows WHERE expires_at < ?').run(this.now() - FLOW_RETENTION_MS);
  }

  async consumeFlow(id: string, browserHash: string): Promise<ConsumedFlow> {
    const row = this.db
      .prepare(
        'SELECT user_id, provider, verifier, browser_hash, expires_at, used_at FROM oauth_flows WHERE id = ?',
      )
      .get(id) as
      | {
          user_id: string;
          provider: string;
          verifier: Uint8Array;
          browser_hash: string;
          expires_at: number;
          used_at: number | null;
        }
      | undefined;
    if (!row) return { status: 'unknown' };
    if (row.used_at !== null) return { status: 'used' };
    if (row.browser_hash !== browserHash) return { status: 'other_browser' };
    const claimed =
      this.db
        .prepare('UPDATE oauth_flows SET used_at = ? WHERE id = ? AND used_at IS NULL')
        .run(this.now(), id).changes === 1;
    if (!claimed) return { status: 'used' };
    return {
      status: 'ok',
      flow: {
        id,
        userId: row.user_id,
        provider: row.provider,
        verifier: this.cipher.open(row.verifier, VaultCipher.flowContext(id)),
        browserHash: row.browser_hash,
        expiresAt: row.expires_at,
      },
    };
  }

  async registeredClient(
    provider: string,
    authorizationServer: string,
    redirectUri: string,
  ): Promise<RegisteredClient | undefined> {
    const row = this.db
      .prepare(
        'SELECT client FROM oauth_clients WHERE provider = ? AND authorization_server = ? AND redirect_uri = ?',
      )
      .get(provider, authorizationServer, redirectUri) as { client: Uint8Array } | undefined;
    if (!row) return undefined;
    const client = this.cipher.openJson<RegisteredClient>(
      row.client,
      VaultCipher.clientContext(provider, authorizationServer, redirectUri),
    );
    // One that does not decrypt is forgotten: the next sign-in registers again.
    if (!client)
      this.db
        .prepare(
          'DELETE FROM oauth_clients WHERE provider = ? AND authorization_server = ? AND redirect_uri = ? AND client = ?',
        )
        .run(provider, authorizationServer, redirectUri, row.client);
    return client;
  }

  async saveRegisteredClient(
    provider: string,
    authorizationServer: string,
    redirectUri: string,
    client: RegisteredClient,
  ): Promise<RegisteredClient> {
    return (
      (await this.insertClient(provider, authorizationServer, redirectUri, client)) ??
      // The one stored before did not decrypt and was just removed: this one takes its place.
      (await this.insertClient(provider, authorizationServer, redirectUri, client))!
    );
  }

  private async insertClient(
    provider: string,
    authorizationServer: string,
    redirectUri: string,
    client: RegisteredClient,
  ): Promise<RegisteredClient | undefined> {
    this.db
      .prepare(
        `INSERT INTO oauth_clients (provider, authorization_server, redirect_uri, client, created_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .run(
        provider,
        authorizationServer,
        redirectUri,
        this.cipher.seal(
          JSON.stringify(client),
          VaultCipher.clientContext(provider, authorizationServer, redirectUri),
        ),
        this.now(),
      );
    return await this.registeredClient(provider, authorizationServer, redirectUri);
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }
}
