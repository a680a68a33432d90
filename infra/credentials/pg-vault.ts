/**
 * The vault in PostgreSQL (DATABASE_URL): one store for every gateway and worker of a deployment, on any
 * number of hosts. The schema is migrated at open, under an advisory lock so processes starting together
 * migrate once. One refresh at a time per credential is a session-level advisory lock, held on its own
 * connection while the refresh runs: it is released when the refresher finishes or its connection dies.
 */
import pg from 'pg';
import { underAdvisoryLock } from '../pg-lock';
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

/** Applied in order, each once, recorded in vault_migrations. Append; never edit one that has shipped. */
const MIGRATIONS: string[] = [
  `CREATE TABLE credentials (
     user_id TEXT NOT NULL,
     provider TEXT NOT NULL,
     secret BYTEA NOT NULL,
     expires_at BIGINT,
     updated_at BIGINT NOT NULL,
     PRIMARY KEY (user_id, provider)
   );
   CREATE TABLE oauth_flows (
     id TEXT PRIMARY KEY,
     user_id TEXT NOT NULL,
     provider TEXT NOT NULL,
     verifier BYTEA NOT NULL,
     browser_hash TEXT NOT NULL,
     expires_at BIGINT NOT NULL,
     used_at BIGINT
   );
   CREATE INDEX oauth_flows_expires_at ON oauth_flows (expires_at);
   CREATE TABLE used_tickets (
     nonce TEXT PRIMARY KEY,
     expires_at BIGINT NOT NULL
   );
   CREATE INDEX used_tickets_expires_at ON used_tickets (expires_at);
   CREATE TABLE oauth_clients (
     provider TEXT NOT NULL,
     authorization_server TEXT NOT NULL,
     redirect_uri TEXT NOT NULL,
     client BYTEA NOT NULL,
     created_at BIGINT NOT NULL,
     PRIMARY KEY (provider, authorization_server, redirect_uri)
   );`,
];

const lockKey = (name: string) => ({ text: 'hashtextextended($1, 0)', value: `agent-vault\n${name}` });

/** BIGINT columns arrive as strings (they may exceed 2^53); epoch milliseconds never do. */
const ms = (value: string | number | null): number | null => (value === null ? null : Number(value));

export class PgVault implements Vault {
  private readonly pool: pg.Pool;
  private readonly cipher: VaultCipher;
  private migrated: Promise<void> | undefined;

  constructor(
    databaseUrl: string,
    key: Buffer,
    private readonly now: () => number = Date.now,
  ) {
    this.cipher = new VaultCipher(key);
    this.pool = new pg.Pool({
      connectionString: databaseUrl,
      max: 10,
      connectionTimeoutMillis: 10_000,
      application_name: 'agent-vault',
    });
    // An idle connection the server dropped (restart, failover) is discarded by the pool; the next query
    // opens a new one. Without a listener the error would end the process.
    this.pool.on('error', () => {});
  }

  ready(): Promise<void> {
    this.migrated ??= this.migrate().catch((error: unknown) => {
      this.migrated = undefined; // a database down at start must not be remembered as broken
      throw new Error(`the vault database (DATABASE_URL) cannot be used: ${(error as Error).message}`, {
        cause: error,
      });
    });
    return this.migrated;
  }

  private async migrate(): Promise<void> {
    const lock = lockKey('migrations');
    await underAdvisoryLock(this.pool, lock.value, async (client) => {
      await client.query(
        'CREATE TABLE IF NOT EXISTS vault_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)',
      );
      const { rows } = await client.query<{ version: number }>('SELECT version FROM vault_migrations');
      const applied = new Set(rows.map((r) => r.version));
      for (const [index, sql] of MIGRATIONS.entries()) {
        if (applied.has(index + 1)) continue;
        await client.query(sql);
        await client.query('INSERT INTO vault_migrations (version, applied_at) VALUES ($1, $2)', [
          index + 1,
          this.now(),
        ]);
      }
    });
  }

  private async query<R extends pg.QueryResultRow>(
    sql: string,
    params: unknown[],
  ): Promise<pg.QueryResult<R>> {
    await this.ready();
    return await this.pool.query<R>(sql, params);
  }

  async put(userId: string, provider: string, secret: StoredSecret, expiresAt: number | null): Promise<void> {
    await this.query(
      `INSERT INTO credentials (user_id, provider, secret, expires_at, updated_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (user_id, provider) DO UPDATE SET secret = excluded.secret, expires_at = excluded.expires_at,
         updated_at = excluded.updated_at`,
      [
        userId,
        provider,
        this.cipher.seal(JSON.stringify(secret), VaultCipher.credentialContext(userId, provider)),
        expiresAt,
        this.now(),
      ],
    );
  }

  async get(userId: string, provider: string): Promise<Credential | undefined> {
    const { rows } = await this.query<{ secret: Buffer; expires_at: string | null; updated_at: string }>(
      'SELECT secret, expires_at, updated_at FROM credentials WHERE user_id = $1 AND provider = $2',
      [userId, provider],
    );
    const row = rows[0];
    if (!row) return undefined;
    const secret = this.cipher.openJson<StoredSecret>(
      row.secret,
      VaultCipher.credentialContext(userId, provider),
    );
    if (!secret) {
      // Only this unreadable row: a sign-in that replaced it meanwhile stays.
      await this.query('DELETE FROM credentials WHERE user_id = $1 AND provider = $2 AND secret = $3', [
        userId,
        provider,
        row.secret,
      ]);
      throw new UnreadableCredential(userId, provider, { cause: 'decryption failed' });
    }
    return { ...secret, userId, provider, expiresAt: ms(row.expires_at), updatedAt: ms(row.updated_at)! };
  }

  async has(userId: string, provider: string): Promise<boolean> {
    const { rowCount } = await this.query('SELECT 1 FROM credentials WHERE user_id = $1 AND provider = $2', [
      userId,
      provider,
    ]);
    return rowCount === 1;
  }

  async delete(userId: string, provider: string): Promise<boolean> {
    const { rowCount } = await this.query('DELETE FROM credentials WHERE user_id = $1 AND provider = $2', [
      userId,
      provider,
    ]);
    return (rowCount ?? 0) > 0;
  }

  async connected(
    userId: string,
  ): Promise<{ provider: string; expiresAt: number | null; updatedAt: number }[]> {
    const { rows } = await this.query<{ provider: string; expires_at: string | null; updated_at: string }>(
      'SELECT provider, expires_at, updated_at FROM credentials WHERE user_id = $1 ORDER BY provider',
      [userId],
    );
    return rows.map((r) => ({
      provider: r.provider,
      expiresAt: ms(r.expires_at),
      updatedAt: ms(r.updated_at)!,
    }));
  }

  async claimRefresh(userId: string, provider: string): Promise<RefreshClaim | undefined> {
    await this.ready();
    const lock = lockKey(`refresh\n${userId}\n${provider}`);
    const client = await this.pool.connect();
    let released = false;
    const release = (error?: Error) => {
      if (released) return;
      released = true;
      client.removeListener('error', release);
      client.release(error);
    };
    // A connection lost while held (database restart, failover) took its lock with it: discard it.
    client.on('error', release);
    const locked = await client
      .query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${lock.text}) AS locked`, [lock.value])
      .then(({ rows }) => rows[0]!.locked)
      .catch((error: Error) => {
        release(error);
        throw error;
      });
    if (!locked) {
      release();
      return undefined;
    }
    return {
      release: async () => {
        if (released) return;
        // If unlocking fails, discarding the connection frees its locks.
        const failed = await client
          .query(`SELECT pg_advisory_unlock(${lock.text})`, [lock.value])
          .then(() => undefined)
          .catch((error: Error) => error);
        release(failed);
      },
    };
  }

  async consumeTicket(nonce: string, expiresAt: number): Promise<boolean> {
    await this.query('DELETE FROM used_tickets WHERE expires_at < $1', [this.now()]);
    const { rowCount } = await this.query(
      'INSERT INTO used_tickets (nonce, expires_at) VALUES ($1, $2) ON CONFLICT (nonce) DO NOTHING',
      [nonce, expiresAt],
    );
    return rowCount === 1;
  }

  async saveFlow(flow: OAuthFlow): Promise<void> {
    await this.query(
      'INSERT INTO oauth_flows (id, user_id, provider, verifier, browser_hash, expires_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [
        flow.id,
        flow.userId,
        flow.provider,
        this.cipher.seal(flow.verifier, VaultCipher.flowContext(flow.id)),
        flow.browserHash,
        flow.expiresAt,
      ],
    );
    await this.query('DELETE FROM oauth_flows WHERE expires_at < $1', [this.now() - FLOW_RETENTION_MS]);
  }

  async consumeFlow(id: string, browserHash: string): Promise<ConsumedFlow> {
    // One statement claims it: of two callbacks racing on two gateways, exactly one gets the row back.
    const { rows } = await this.query<{
      user_id: string;
      provider: string;
      verifier: Buffer;
      expires_at: string;
    }>(
      `UPDATE oauth_flows SET used_at = $3 WHERE id = $1 AND used_at IS NULL AND browser_hash = $2
       RETURNING user_id, provider, verifier, expires_at`,
      [id, browserHash, this.now()],
    );
    const row = rows[0];
    if (row)
      return {
        status: 'ok',
        flow: {
          id,
          userId: row.user_id,
          provider: row.provider,
          verifier: this.cipher.open(row.verifier, VaultCipher.flowContext(id)),
          browserHash,
          expiresAt: ms(row.expires_at)!,
        },
      };
    const seen = await this.query<{ used_at: string | null }>(
      'SELECT used_at FROM oauth_flows WHERE id = $1',
      [id],
    );
    if (!seen.rows[0]) return { status: 'unknown' };
    return { status: seen.rows[0].used_at !== null ? 'used' : 'other_browser' };
  }

  async registeredClient(
    provider: string,
    authorizationServer: string,
    redirectUri: string,
  ): Promise<RegisteredClient | undefined> {
    const { rows } = await this.query<{ client: Buffer }>(
      'SELECT client FROM oauth_clients WHERE provider = $1 AND authorization_server = $2 AND redirect_uri = $3',
      [provider, authorizationServer, redirectUri],
    );
    if (!rows[0]) return undefined;
    const client = this.cipher.openJson<RegisteredClient>(
      rows[0].client,
      VaultCipher.clientContext(provider, authorizationServer, redirectUri),
    );
    // One that does not decrypt is forgotten: the next sign-in registers again.
    if (!client)
      await this.query(
        'DELETE FROM oauth_clients WHERE provider = $1 AND authorization_server = $2 AND redirect_uri = $3 AND client = $4',
        [provider, authorizationServer, redirectUri, rows[0].client],
      );
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
    await this.query(
      `INSERT INTO oauth_clients (provider, authorization_server, redirect_uri, client, created_at)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [
        provider,
        authorizationServer,
        redirectUri,
        this.cipher.seal(
          JSON.stringify(client),
          VaultCipher.clientContext(provider, authorizationServer, redirectUri),
        ),
        this.now(),
      ],
    );
    return await this.registeredClient(provider, authorizationServer, redirectUri);
  }

  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }
}
