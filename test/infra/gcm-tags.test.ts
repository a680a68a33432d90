/**
 * AES-GCM with a short tag can be forged by trying (a 4-byte tag is one guess in 2^32), and Node accepts tags of
 * 4 to 16 bytes unless told the length. Both places that open sealed data (the vault's rows, Temporal payloads)
 * accept only the full 16 bytes: a ciphertext sealed with a 4-byte tag is refused, not opened.
 */
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { VaultCipher } from '../../infra/credentials/vault';
import { EncryptionCodec } from '../../infra/temporal/codec';

/** What an attacker who guessed a short tag would store: IV, a 4-byte tag, then the body, as the formats lay out. */
function sealedWithShortTag(key: Buffer, plain: Buffer, aad?: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 4 });
  if (aad) cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

describe('AES-GCM tags', () => {
  const key = randomBytes(32);

  it('the vault opens what it sealed, and refuses a row sealed with a 4-byte tag', () => {
    const cipher = new VaultCipher(key);
    expect(cipher.open(cipher.seal('secret', 'u\np'), 'u\np')).toBe('secret');
    // An empty body: the 4-byte tag is then all the layout's "tag" field holds.
    const forged = sealedWithShortTag(key, Buffer.alloc(0), 'u\np');
    expect(() => cipher.open(forged, 'u\np')).toThrow();
    expect(cipher.openJson(forged, 'u\np')).toBeUndefined();
  });

  it('the payload codec decodes what it encoded, and refuses a payload sealed with a 4-byte tag', async () => {
    const codec = new EncryptionCodec(key);
    const payload = {
      metadata: { encoding: new TextEncoder().encode('json/plain') },
      data: new TextEncoder().encode('"hi"'),
    };
    const [encoded] = await codec.encode([payload]);
    const [decoded] = await codec.decode([encoded!]);
    expect(new TextDecoder().decode(decoded!.data)).toBe('"hi"');
    const forged = {
      metadata: encoded!.metadata,
      data: sealedWithShortTag(key, Buffer.alloc(0)),
    };
    await expect(codec.decode([forged])).rejects.toThrow();
    expect(createHash('sha256').update(key).digest('hex').slice(0, 16)).toBe(codec.keyId);
  });
});
