/**
 * A per-install secret in DATA_DIR, created on first use with owner-only permissions (as Jupyter's token), unless
 * the environment gives one. Two processes starting at the same moment end up with the same secret.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function loadOrCreateSecret(dataDir: string, name: string, explicit: string | undefined): string {
  if (explicit) return explicit;
  const file = path.join(dataDir, name);
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    try {
      // `wx`: a second process starting at the same moment keeps the first one's secret.
      writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  if (statSync(file).mode & 0o077) chmodSync(file, 0o600);
  const secret = readFileSync(file, 'utf8').trim();
  if (secret.length < 16)
    throw new Error(`${file} holds no usable secret: delete it and start again to get a new one`);
  return secret;
}
