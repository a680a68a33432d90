/**
 * The vault's master key: VAULT_KEY (32 bytes, base64 or hex) or a key file generated on first use under
 * DATA_DIR with owner-only permissions. Separate keys for encryption and for signing OAuth state are
 * derived from it with HKDF, so one secret never serves two purposes.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hkdfSync, randomBytes } from 'node:crypto';
import path from 'node:path';

export interface VaultKeys {
  encryption: Buffer;
  signing: Buffer;
}

function decodeKey(text: string, where: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32)
    throw new Error(
      `${where} must be 32 bytes, as 64 hex characters or base64 (e.g. \`openssl rand -base64 32\`)`,
    );
  return key;
}

export function loadMasterKey(options: { vaultKey: string | undefined; dataDir: string }): Buffer {
  if (options.vaultKey) return decodeKey(options.vaultKey, 'VAULT_KEY');
  const file = path.join(options.dataDir, 'vault.key');
  if (existsSync(file)) {
    const mode = statSync(file).mode & 0o777;
    if (mode & 0o077)
      throw new Error(`${file} is readable by others (mode ${mode.toString(8)}): run \`chmod 600 ${file}\``);
    return decodeKey(readFileSync(file, 'utf8'), file);
  }
  mkdirSync(options.dataDir, { recursive: true });
  const key = randomBytes(32);
  // `wx`: never overwrite a key another process wrote a moment ago.
  try {
    writeFileSync(file, key.toString('base64'), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      return decodeKey(readFileSync(file, 'utf8'), file);
    throw error;
  }
  chmodSync(file, 0o600);
  return key;
}

export function deriveKeys(master: Buffer): VaultKeys {
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), purpose, 32));
  return { encryption: derive('agent-vault-encryption-v1'), signing: derive('agent-oauth-state-v1') };
}
