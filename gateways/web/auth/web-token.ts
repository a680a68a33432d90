/**
 * Local mode's per-install secret: `DATA_DIR/web-token`, created on first start with owner-only
 * permissions (as Jupyter's token). `WEB_AUTH_TOKEN` replaces it when set.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { loadOrCreateSecret } from '../../../infra/secret-file';

export function webTokenPath(dataDir: string): string {
  return path.join(dataDir, 'web-token');
}

export function loadOrCreateWebToken(dataDir: string, explicit: string | undefined): string {
  return loadOrCreateSecret(dataDir, path.basename(webTokenPath(dataDir)), explicit);
}

/** A short fingerprint of the secret: cookies carry it, so a new secret signs everyone out. */
export function tokenFingerprint(token: string): string {
  return createHash('sha256').update(token).digest('base64url').slice(0, 22);
}
