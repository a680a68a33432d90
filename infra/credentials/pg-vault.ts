/**
 * The vault in PostgreSQL (DATABASE_URL): one store for every gateway and worker of a deployment, on any
 * number of hosts. The schema is migrated at open, under an advisory lock so processes starting together
 * migrate once. One refresh at a time per credential is a session-level advisory lock, held on its own
 * connection while the refresh runs: it is released when the refresher finishes or its connection dies.
 */
import pg from 'pg';
import { underAdvisoryLock } from '../pg-lock';
import { SqlVault, type SqlStore, type SqlValue } from './sql-vault';
import type { RefreshClaim } from './vault';

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
  `CREATE TABLE push_configs (
     task_id TEXT NOT NULL,
     id TEXT NOT NULL,
     user_id TEXT NOT NULL,
     config BYTEA NOT NULL,
     created_at BIGINT NOT NULL,
     PRIMARY KEY (task_id, id)
   );`,
];

const lockKey = (name: string) => ({ text: 'hashtextextended($1, 0)', value: `agent-vault\n${name}` });

/** `?` placeholders (the core's) as PostgreSQL's numbered ones. */
const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

class PgStore implements SqlStore {
  private readonly pool: pg.Pool;
  private migrated: Promise<void> | undefined;

  constructor(
    databaseUrl: string,
    private readonly now: () => number,
  ) {
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

  async query<R>(sql: string, params: SqlValue[]): Promise<{ rows: R[]; changed: number }> {
    const result = await this.pool.query(numbered(sql), params);
    return { rows: result.rows as R[], changed: result.rowCount ?? 0 };
  }

  async claimRefresh(userId: string, provider: string): Promise<RefreshClaim | undefined> {
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

  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }
}

export class PgVault extends SqlVault {
  constructor(databaseUrl: string, key: Buffer, now: () => number = Date.now) {
    super(new PgStore(databaseUrl, now), key, now);
  }
}
