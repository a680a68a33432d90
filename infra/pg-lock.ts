/**
 * One transaction under a transaction-level advisory lock, on a connection of its own: how processes starting
 * together make or migrate a schema once (the vault, the transcript store). A failure rolls back and rethrows.
 */
import type pg from 'pg';

export async function underAdvisoryLock(
  pool: pg.Pool,
  lockName: string,
  work: (client: pg.PoolClient) => Promise<void>,
): Promise<void> {
  const client = await pool.connect();
  const lost = () => {}; // the failed query rejects too, and says more
  client.on('error', lost);
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [lockName]);
    await work(client);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.removeListener('error', lost);
    client.release();
  }
}
