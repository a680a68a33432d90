/**
 * DATA_DIR holds what no other account on the host may read: the vault and its key, the transcript store, the
 * embedded Temporal server's database (histories in plain text unless PAYLOAD_KEY is set), the operator key.
 * So it is 0700 and its files 0600, whatever the umask was when they were made. A directory someone else owns
 * (a volume prepared by an operator) is left as it is and said once.
 */
import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** Makes `dir` private to this account: the directory 0700, the files directly in it 0600. Returns what it changed. */
export function makeDataDirPrivate(dir: string, warn: (message: string) => void = () => {}): string[] {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const me = process.getuid?.();
  const changed: string[] = [];
  const tighten = (file: string, mode: number) => {
    // A file can go between listing and looking: the embedded server's SQLite journal comes and goes by the millisecond.
    const stat = statSync(file, { throwIfNoEntry: false });
    if (!stat) return;
    if ((stat.mode & 0o777 & ~mode) === 0) return;
    if (me !== undefined && stat.uid !== me) {
      warn(
        `${file} is mode ${(stat.mode & 0o777).toString(8)} and owned by uid ${stat.uid}: make it ${mode.toString(8)}`,
      );
      return;
    }
    try {
      chmodSync(file, stat.mode & 0o777 & mode);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    changed.push(file);
  };
  tighten(dir, 0o700);
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (statSync(file, { throwIfNoEntry: false })?.isFile()) tighten(file, 0o600);
  }
  return changed;
}
