/**
 * `npm install` runs a package's install script only when package.json's `allowScripts` names it, and npm 11 warns
 * about every other one: a newcomer's install ends with warnings nobody explained. Every package of the lock file
 * that has an install script is named there, so a new dependency with one is a decision, not a surprise.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');

describe('install scripts', () => {
  it('names in allowScripts every package of the lock file that has one, and no other', () => {
    const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { hasInstallScript?: boolean; name?: string }>;
    };
    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      allowScripts?: Record<string, boolean>;
    };
    const withScripts = new Set(
      Object.entries(lock.packages)
        .filter(([, entry]) => entry.hasInstallScript)
        .map(([where, entry]) => entry.name ?? where.replace(/^.*node_modules\//, '')),
    );
    expect(Object.keys(manifest.allowScripts ?? {}).sort()).toEqual([...withScripts].sort());
  });
});
