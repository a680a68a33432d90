/** Transcript chunks in PostgreSQL (DATABASE_URL): one store for every worker of a deployment, on any host. */
import pg from 'pg';
import type { ChunkBackend, StoredChunk } from './backend';
import { underAdvisoryLock } from '../pg-lock';

const TOUCH_AFTER_MS = 86_400_000;

export class PgChunkStore implements ChunkBackend {
  private readonly pool: pg.Pool;
  private created: Promise<void> | undefined;

  constructor(databaseUrl: string) {
    this.pool = new pg.Pool({
      connectionString: databaseUrl,
      max: 4,
      connectionTimeoutMillis: 10_000,
      application_name: 'agent-transcripts',
    });
    this.pool.on('error', () => {}); // a dropped idle connection is replaced on the next query
  }

  async put(scope: string, chunks: StoredChunk[], now: number): Promise<void> {
    await this.ready();
    await this.pool.query(
      `INSERT INTO transcript_chunks (scope, link, parent, sealed, used_at)
       SELECT $1, l, p, s, $5 FROM unnest($2::text[], $3::text[], $4::bytea[]) AS t(l, p, s)
       ON CONFLICT (scope, link) DO UPDATE SET used_at = EXCLUDED.used_at`,
      [
        scope,
        chunks.map((c) => c.link),
        chunks.map((c) => c.parent),
        chunks.map((c) => Buffer.from(c.sealed)),
        now,
      ],
    );
  }

  async chain(scope: string, link: string, length: number, now: number): Promise<StoredChunk[]> {
    await this.ready();
    const { rows } = await this.pool.query<{ link: string; parent: string; sealed: Buffer; used_at: string }>(
      `WITH RECURSIVE walk (link, parent, sealed, used_at, depth) AS (
         SELECT link, parent, sealed, used_at, 1 FROM transcript_chunks WHERE scope = $1 AND link = $2
         UNION ALL
         SELECT c.link, c.parent, c.sealed, c.used_at, walk.depth + 1
           FROM transcript_chunks c JOIN walk ON c.scope = $1 AND c.link = walk.parent
          WHERE walk.depth < $3
       )
       SELECT link, parent, sealed, used_at FROM walk ORDER BY depth`,
      [scope, link, length],
    );
    if (rows[0] && now - Number(rows[0].used_at) > TOUCH_AFTER_MS)
      await this.pool.query('UPDATE transcript_chunks SET used_at = $2 WHERE scope = $1 AND used_at < $3', [
        scope,
        now,
        now - TOUCH_AFTER_MS,
      ]);
    return rows.map(({ link, parent, sealed }) => ({ link, parent, sealed }));
  }

  async prune(olderThan: number): Promise<number> {
    await this.ready();
    const result = await this.pool.query('DELETE FROM transcript_chunks WHERE used_at < $1', [olderThan]);
    return result.rowCount ?? 0;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** The table, made once per database under an advisory lock (workers starting together make it once). */
  private ready(): Promise<void> {
    this.created ??= this.create().catch((error: unknown) => {
      this.created = undefined;
      throw new Error(`the transcript store (DATABASE_URL) cannot be used: ${(error as Error).message}`, {
        cause: error,
      });
    });
    return this.created;
  }

  private async create(): Promise<void> {
    await underAdvisoryLock(this.pool, 'agent-transcript-chunks', async (client) => {
      await client.query(`CREATE TABLE IF NOT EXISTS transcript_chunks (
        scope TEXT NOT NULL,
        link TEXT NOT NULL,
        parent TEXT NOT NULL,
        sealed BYTEA NOT NULL,
        used_at BIGINT NOT NULL,
        PRIMARY KEY (scope, link)
      )`);
      await client.query(
        'CREATE INDEX IF NOT EXISTS transcript_chunks_used_at ON transcript_chunks (used_at)',
      );
    });
  }
}
