/**
 * The tool-run ledger: makes execution idempotent per (workflow, tool call id). A retried activity gets
 * the first run's result; a run that started but never finished (its worker was killed) is reported as
 * interrupted instead of being run a second time. Stored in SQLite under DATA_DIR.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { ToolRunResult } from '../types';

export class ToolRunLedger {
  private readonly db: DatabaseSync;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.db = new DatabaseSync(path.join(dataDir, 'tool-runs.sqlite'));
    this.db.exec(`PRAGMA journal_mode = WAL;
      CREATE TABLE IF NOT EXISTS tool_runs (
        key TEXT PRIMARY KEY, tool TEXT NOT NULL, status TEXT NOT NULL, result TEXT,
        started_at INTEGER NOT NULL, finished_at INTEGER)`);
  }

  async runOnce(key: string, tool: string, run: () => Promise<ToolRunResult>): Promise<ToolRunResult> {
    const claimed = this.db
      .prepare(
        `INSERT INTO tool_runs (key, tool, status, started_at) VALUES (?, ?, 'started', ?) ON CONFLICT(key) DO NOTHING`,
      )
      .run(key, tool, Date.now());
    if (claimed.changes === 0) {
      const row = this.db.prepare('SELECT status, result FROM tool_runs WHERE key = ?').get(key) as {
        status: string;
        result: string | null;
      };
      if (row.status === 'done' && row.result) return JSON.parse(row.result) as ToolRunResult;
      return {
        status: 'error',
        content:
          'interrupted: an earlier attempt of this call started but did not finish (its worker stopped), so it may or may not have run. It was not run again.',
      };
    }
    let result: ToolRunResult;
    try {
      result = await run();
    } catch (error) {
      // Executors return results once their side effect may have happened; a throw means it did not start,
      // so the claim is released and Temporal's retry may try again.
      this.db.prepare('DELETE FROM tool_runs WHERE key = ?').run(key);
      throw error;
    }
    if (result.status === 'credential_required') {
      // Nothing ran (the server asked for a sign-in): after it, the same call must really run.
      this.db.prepare('DELETE FROM tool_runs WHERE key = ?').run(key);
      return result;
    }
    this.db
      .prepare(`UPDATE tool_runs SET status = 'done', result = ?, finished_at = ? WHERE key = ?`)
      .run(JSON.stringify(result), Date.now(), key);
    return result;
  }

  close(): void {
    this.db.close();
  }
}
