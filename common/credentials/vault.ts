/**
 * The credential vault: per (user, provider) secrets in an embedded SQLite database, encrypted with
 * AES-256-GCM (authenticated; the row's user and provider are bound in as associated data, so a
 * ciphertext moved to another row does not decrypt). Also holds the short-lived OAuth flows (PKCE
 * verifier, encrypted; single-use) and the OAuth clients registered dynamically for MCP servers. Shared by the gateway (writes after sign-in) and the worker (reads,
 * refreshes before use, one refresh at a time).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';

export interface StoredSecret {
  /** OAuth access token, or the API key. */
  accessToken: string;
  refreshToken?: string;
  tokenType?: string;
  scope?: string;
}

export interface Credential extends StoredSecret {
  userId: string;
  provider: string;
  /** Epoch ms; null when the secret does not expire (API keys, tokens without expires_in). */
  expiresAt: number | null;
  updatedAt: number;
}

export interface OAuthFlow {
  id: string;
  userId: string;
  provider: string;
  verifier: string;
  browserHash: string;
  expiresAt: number;
}

export interface RegisteredClient {
  clientId: string;
  /** Only when the authorization server issued one (confidential client); encrypted like every secret. */
  clientSecret?: string;
}

const REFRESH_LEASE_MS = 30_000;

export class Vault {
  private readonly db: DatabaseSync;

  constructor(
    file: string,
    private readonly key: Buffer,
    private readonly now: () => number = Date.now,
  ) {
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

  private seal(plain: string, context: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  private open(sealed: Uint8Array, context: string): string {
    const data = Buffer.from(sealed);
    const decipher = createDecipheriv('aes-256-gcm', this.key, data.subarray(0, 12));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(data.subarray(12, 28));
    return Buffer.concat([decipher.update(data.subarray(28)), decipher.final()]).toString('utf8');
  }

  put(userId: string, provider: string, secret: StoredSecret, expiresAt: number | null): void {
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
        this.seal(JSON.stringify(secret), `${userId}\n${provider}`),
        expiresAt,
        this.now(),
      );
  }

  get(userId: string, provider: string): Credential | undefined {
    const row = this.db
      .prepare('SELECT secret, expires_at, updated_at FROM credentials WHERE user_id = ? AND provider = ?')
      .get(userId, provider) as
      { secret: Uint8Array; expires_at: number | null; updated_at: number } | undefined;
    if (!row) return undefined;
    const secret = JSON.parse(this.open(row.secret, `${userId}\n${provider}`)) as StoredSecret;
    return { ...secret, userId, provider, expiresAt: row.expires_at, updatedAt: row.updated_at };
  }

  has(userId: string, provider: string): boolean {
    return (
      this.db
        .prepare('SELECT 1 FROM credentials WHERE user_id = ? AND provider = ?')
        .get(userId, provider) !== undefined
    );
  }

  delete(userId: string, provider: string): boolean {
    return (
      this.db.prepare('DELETE FROM credentials WHERE user_id = ? AND provider = ?').run(userId, provider)
        .changes > 0
    );
  }

  /** Providers a user has connected (no secrets). */
  connected(userId: string): { provider: string; expiresAt: number | null; updatedAt: number }[] {
    return (
      this.db
        .prepare(
          'SELECT provider, expires_at, updated_at FROM credentials WHERE user_id = ? ORDER BY provider',
        )
        .all(userId) as { provider: string; expires_at: number | null; updated_at: number }[]
    ).map((r) => ({ provider: r.provider, expiresAt: r.expires_at, updatedAt: r.updated_at }));
  }

  /** Claims the right to refresh this credential (one refresher at a time across processes). */
  claimRefresh(userId: string, provider: string): boolean {
    const now = this.now();
    return (
      this.db
        .prepare(
          'UPDATE credentials SET refreshing_until = ? WHERE user_id = ? AND provider = ? AND refreshing_until < ?',
        )
        .run(now + REFRESH_LEASE_MS, userId, provider, now).changes === 1
    );
  }

  releaseRefresh(userId: string, provider: string): void {
    this.db
      .prepare('UPDATE credentials SET refreshing_until = 0 WHERE user_id = ? AND provider = ?')
      .run(userId, provider);
  }

  /** Marks a single-use link's nonce used: true the first time, false ever after (until it expires). */
  consumeTicket(nonce: string, expiresAt: number): boolean {
    this.db.prepare('DELETE FROM used_tickets WHERE expires_at < ?').run(this.now());
    const inserted = this.db
      .prepare('INSERT INTO used_tickets (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING')
      .run(nonce, expiresAt);
    return inserted.changes === 1;
  }

  saveFlow(flow: OAuthFlow): void {
    this.db
      .prepare(
        'INSERT INTO oauth_flows (id, user_id, provider, verifier, browser_hash, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(
        flow.id,
        flow.userId,
        flow.provider,
        this.seal(flow.verifier, `flow\n${flow.id}`),
        flow.browserHash,
        flow.expiresAt,
      );
    // Old flows are of no use to anyone.
    this.db.prepare('DELETE FROM oauth_flows WHERE expires_at < ?').run(this.now() - 24 * 3_600_000);
  }

  /**
   * Marks a flow used and returns it, exactly once, and only to the browser that started it: a callback
   * from another browser leaves the flow untouched (so the rightful one still completes), a replayed
   * callback finds it used.
   */
  consumeFlow(
    id: string,
    browserHash: string,
  ): { status: 'ok'; flow: OAuthFlow } | { status: 'unknown' | 'used' | 'other_browser' } {
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
        verifier: this.open(row.verifier, `flow\n${id}`),
        browserHash: row.browser_hash,
        expiresAt: row.expires_at,
      },
    };
  }

  /**
   * A client registered dynamically (RFC 7591) for one provider, authorization server and redirect URI.
   * Every process shares it: the gateway registers once, the worker refreshes tokens with the same client.
   */
  registeredClient(
    provider: string,
    authorizationServer: string,
    redirectUri: string,
  ): RegisteredClient | undefined {
    const row = this.db
      .prepare(
        'SELECT client FROM oauth_clients WHERE provider = ? AND authorization_server = ? AND redirect_uri = ?',
      )
      .get(provider, authorizationServer, redirectUri) as { client: Uint8Array } | undefined;
    if (!row) return undefined;
    return JSON.parse(
      this.open(row.client, `client\n${provider}\n${authorizationServer}\n${redirectUri}`),
    ) as RegisteredClient;
  }

  /** Keeps the first registration when two processes register at once; returns the one kept. */
  saveRegisteredClient(
    provider: string,
    authorizationServer: string,
    redirectUri: string,
    client: RegisteredClient,
  ): RegisteredClient {
    this.db
      .prepare(
        `INSERT INTO oauth_clients (provider, authorization_server, redirect_uri, client, created_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .run(
        provider,
        authorizationServer,
        redirectUri,
        this.seal(JSON.stringify(client), `client\n${provider}\n${authorizationServer}\n${redirectUri}`),
        this.now(),
      );
    return this.registeredClient(provider, authorizationServer, redirectUri)!;
  }

  close(): void {
    this.db.close();
  }
}
