/** Transcript chunks in an SQLite file beside the vault (one machine: `npm start`, or a worker without DATABASE_URL). */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { ChunkBackend, StoredChunk } from './backend';

/** A chunk read within this long is not touched again (its last use matters only for pruning, in days). */
const TOUCH_AFTER_MS = 86_400_000;

/**
 * `synchronous = NORMAL`: a commit does not wait for the disk (WAL stays consistent; a power cut may lose the
 * newest chunks, never corrupt the file). Losing a chunk costs one call that sends its messages whole again
 * (store.ts), while FULL's fsync blocked the worker's event loop on every model call (~0.5 ms alone, several
 * under load).
 */
export class SqliteChunkStore implements ChunkBackend {
  private readonly db: DatabaseSync;
  private readonly insert: StatementSync;
  private readonly walk: StatementSync;

  constructor(file: string) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.db = new DatabaseSync(file);
    this.db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = NORMAL;
      PRAGMA busy_timeout = 5000;
      CREATE TABLE IF NOT EXISTS transcript_chunks (
        scope TEXT NOT NULL,
        link TEXT NOT NULL,
        parent TEXT NOT NULL,
        sealed BLOB NOT NULL,
        used_at INTEGER NOT NULL,
        PRIMARY KEY (scope, link)
      );
      CREATE INDEX IF NOT EXISTS transcript_chunks_used_at ON transcript_chunks (used_at);
    `);
    this.insert = this.db.prepare(
      `INSERT INTO transcript_chunks (scope, link, parent, sealed, used_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (scope, link) DO UPDATE SET used_at = excluded.used_at`,
    );
    this.walk = this.db.prepare(
      `WITH RECURSIVE walk (link, parent, sealed, used_at, depth) AS (
             SELECT link, parent, sealed, used_at, 1 FROM transcript_chunks WHERE scope = ? AND link = ?
             UNION ALL
             SELECT c.link, c.parent, c.sealed, c.used_at, walk.depth + 1
               FROM transcript_chunks c JOIN walk ON c.scope = ? AND c.link = walk.parent
              WHERE walk.depth < ?
           )
           SELECT link, parent, sealed, used_at FROM walk ORDER BY depth`,
    );
  }

  async put(scope: string, chunks: StoredChunk[], now: number): Promise<void> {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      for (const chunk of chunks) this.insert.run(scope, chunk.link, chunk.parent, chunk.sealed, now);
      this.db.exec('COMMIT');
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  async chain(scope: string, link: string, length: number, now: number): Promise<StoredChunk[]> {
    const rows = this.walk.all(scope, link, scope, length) as {
      link: string;
      parent: string;
      sealed: Uint8Array;
      used_at: number;
    }[];
    // Only the newest link's use is recorded: pruning goes by conversation activity, and a chain is read whole.
    if (rows[0] && now - rows[0].used_at > TOUCH_AFTER_MS)
      this.db
        .prepare('UPDATE transcript_chunks SET used_at = ? WHERE scope = ? AND used_at < ?')
        .run(now, scope, now - TOUCH_AFTER_MS);
    return rows.map(({ link, parent, sealed }) => ({ link, parent, sealed }));
  }

  async prune(olderThan: number): Promise<number> {
    return Number(this.db.prepare('DELETE FROM transcript_chunks WHERE used_at < ?').run(olderThan).changes);
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }
}
