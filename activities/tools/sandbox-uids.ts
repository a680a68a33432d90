/**
 * Each conversation's own unprivileged uid, when the worker runs as root: handed out once, in order, and kept in
 * a small table beside the working directories (`workdirs/.uids.sqlite`), so two conversations never share a uid
 * (a hash of the directory, as before, collided: one conversation's command could then read another's files).
 * Processes of one machine share the table; the first to ask for a directory gives it the next free uid.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/** Far above the accounts a distribution creates, below the 2^31 some tools mishandle. */
export const FIRST_SANDBOX_UID = 40_000;
export const LAST_SANDBOX_UID = 2_000_000_000;

const known = new Map<string, number>();
const tables = new Map<string, DatabaseSync>();

function table(workdirsDir: string): DatabaseSync {
  let db = tables.get(workdirsDir);
  if (!db) {
    mkdirSync(workdirsDir, { recursive: true });
    db = new DatabaseSync(path.join(workdirsDir, '.uids.sqlite'));
    db.exec(`
      PRAGMA busy_timeout = 5000;
      CREATE TABLE IF NOT EXISTS sandbox_uids (workdir TEXT PRIMARY KEY, uid INTEGER NOT NULL UNIQUE);
    `);
    tables.set(workdirsDir, db);
  }
  return db;
}

/** The uid of the conversation whose working directory is `workdir` (allocated on first use). */
export function sandboxUid(workdir: string): number {
  const cached = known.get(workdir);
  if (cached !== undefined) return cached;
  const db = table(path.dirname(workdir));
  const name = path.basename(workdir);
  db.exec('BEGIN IMMEDIATE');
  let uid: number;
  try {
    const row = db.prepare('SELECT uid FROM sandbox_uids WHERE workdir = ?').get(name) as
      { uid: number } | undefined;
    if (row) uid = row.uid;
    else {
      const last = db.prepare('SELECT MAX(uid) AS uid FROM sandbox_uids').get() as { uid: number | null };
      uid = last.uid === null ? FIRST_SANDBOX_UID : last.uid + 1;
      if (uid > LAST_SANDBOX_UID) throw new Error('no sandbox uid is left for a new conversation');
      db.prepare('INSERT INTO sandbox_uids (workdir, uid) VALUES (?, ?)').run(name, uid);
    }
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
  known.set(workdir, uid);
  return uid;
}
