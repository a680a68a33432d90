/**
 * The unprivileged rows do not depend on where the checkout lives: from a clone under a mode-700 directory (as under
 * /root, or a `mktemp -d`), a worker started as `nobody` cannot even load the code, and from the readable copy the
 * sandbox tests use it can (test/helpers/readable-checkout.ts).
 */
import { chmodSync, mkdirSync, readdirSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/config';
import { AS_NOBODY, readableCheckout, requireRootFor } from '../helpers/readable-checkout';

const ROOT = path.resolve(__dirname, '../..');

/** Imports one module of the checkout at `code` as `nobody`, as the unprivileged worker does first. */
function loadAsNobody(code: string) {
  const [setpriv, ...drop] = AS_NOBODY;
  return spawnSync(
    setpriv!,
    [
      ...drop,
      process.execPath,
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `const { AgentError } = await import(${JSON.stringify(path.join(code, 'common/errors.ts'))}); process.stdout.write(typeof AgentError);`,
    ],
    { cwd: code, encoding: 'utf8', env: { PATH: process.env.PATH!, HOME: '/tmp' } },
  );
}

describe('the checkout an unprivileged worker runs', () => {
  it('loads from the readable copy even when the clone sits under a mode-700 directory', () => {
    requireRootFor('Loading the checkout as nobody');
    const hidden = tempDir('private-home-');
    chmodSync(hidden, 0o700);
    const clone = path.join(hidden, 'clone');
    mkdirSync(clone);
    const entries = readdirSync(ROOT)
      .filter((name) => name !== '.git' && name !== 'data')
      .map((name) => path.join(ROOT, name));
    execFileSync('cp', ['-al', ...entries, clone]);
    // The situation the issue reported: nobody cannot read a clone there at all.
    const direct = loadAsNobody(clone);
    expect(direct.status).not.toBe(0);
    expect(direct.stderr).toMatch(/EACCES|permission denied/i);
    const readable = loadAsNobody(readableCheckout(clone));
    expect(readable.stderr).toBe('');
    expect(readable.stdout).toBe('function');
  });
});
