/**
 * Local mode's per-install secret: `DATA_DIR/web-token`, created on first start with owner-only
 * permissions (as Jupyter's token). `WEB_AUTH_TOKEN` replaces it when set.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function webTokenPath(dataDir: string): string {
  return path.join(dataDir, 'web-token');
}

export function loadOrCreateWebToken(dataDir: string, explicit: string | undefined): string {
  if (explicit) return explicit;
  const file = webTokenPath(dataDir);
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
  const token = readFileSync(file, 'utf8').trim();
  if (token.length < 16)
    throw new Error(`${file} holds no usable secret: delete it and start again to get a new one`);
  return token;
}

/** A short fingerprint of the secret: cookies carry it, so a new secret signs everyone out. */
export function tokenFingerprint(token: string): string {
  return createHash('sha256').update(token).digest('base64url').slice(0, 22);
}
