/**
 * DATA_DIR is private to the account that runs the agent: other accounts on the host cannot read the vault, the
 * keys, the transcripts or the embedded server's database (plain-text histories without PAYLOAD_KEY).
 */
import { mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDataDirPrivate } from '../../infra/data-dir';
import { tempDir } from '../helpers/config';

const mode = (file: string) => statSync(file).mode & 0o777;

describe('DATA_DIR', () => {
  it('is made 0700 with its files 0600, whatever the umask made them', () => {
    const dir = path.join(tempDir(), 'data');
    mkdirSync(dir, { mode: 0o755 });
    writeFileSync(path.join(dir, 'temporal.sqlite'), 'histories', { mode: 0o644 });
    writeFileSync(path.join(dir, 'vault.sqlite'), 'rows', { mode: 0o666 });
    mkdirSync(path.join(dir, 'workdirs'), { mode: 0o755 });
    const changed = makeDataDirPrivate(dir);
    expect(mode(dir)).toBe(0o700);
    expect(mode(path.join(dir, 'temporal.sqlite'))).toBe(0o600);
    expect(mode(path.join(dir, 'vault.sqlite'))).toBe(0o600);
    expect(changed).toHaveLength(3);
    // Already private: nothing to change the next time.
    expect(makeDataDirPrivate(dir)).toEqual([]);
  });

  it('creates a missing DATA_DIR private', () => {
    const dir = path.join(tempDir(), 'fresh', 'data');
    makeDataDirPrivate(dir);
    expect(mode(dir)).toBe(0o700);
  });

  it('passes over a file that is gone by the time it is looked at (the server’s SQLite journal comes and goes)', () => {
    const dir = path.join(tempDir(), 'data');
    mkdirSync(dir, { mode: 0o755 });
    // A dangling link is listed by readdir and gone for stat: the same moment a journal deleted in between makes.
    symlinkSync(path.join(dir, 'deleted-journal'), path.join(dir, 'temporal.sqlite-journal'));
    writeFileSync(path.join(dir, 'vault.sqlite'), 'rows', { mode: 0o644 });
    expect(() => makeDataDirPrivate(dir)).not.toThrow();
    expect(mode(path.join(dir, 'vault.sqlite'))).toBe(0o600);
  });
});
