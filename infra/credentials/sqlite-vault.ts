/**
 * The vault in an embedded SQLite file (VAULT_PATH, default DATA_DIR/vault.sqlite): the default for one
 * machine (`npm start`). Processes on that machine share it; one refresh at a time is a lease column.
 * What is stored and how is the core's (`sql-vault.ts`); this is the schema and the statement runner.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SqlVault, type SqlStore, type SqlValue } from './sql-vault';
import type { RefreshClaim } from './vault';

/** A refresher that died holding the lease blocks others this long at most. */
const REFRESH_LEASE_MS = 30_000;

const SCHEMA = `
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
  CREATE TABLE IF NOT EXISTS push_configs (
    task_id TEXT NOT NULL,
    id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    config BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, id)
  );
`;

class SqliteStore implements SqlStore {
  private readonly db: DatabaseSync;

  constructor(
    file: string,
    private readonly now: () => number,
  ) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.db = new DatabaseSync(file);
    this.db.exec(SCHEMA);
  }

  async ready(): Promise<void> {}

  async query<R>(sql: string, params: SqlValue[]): Promise<{ rows: R[]; changed: number }> {
    const statement = this.db.prepare(sql);
    if (/^\s*SELECT\b|\bRETURNING\b/i.test(sql)) {
      const rows = statement.all(...params) as R[];
      return { rows, changed: rows.length };
    }
    return { rows: [], changed: Number(statement.run(...params).changes) };
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

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }
}

export class SqliteVault extends SqlVault {
  constructor(file: string, key: Buffer, now: () => number = Date.now) {
    super(new SqliteStore(file, now), key, now);
  }
}
