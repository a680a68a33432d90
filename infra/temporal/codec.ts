/**
 * Optional payload encryption: a Temporal PayloadCodec (AES-256-GCM, key from PAYLOAD_KEY) used by every
 * client and worker, so workflow inputs, signals, results and activity payloads are encrypted before they
 * reach the Temporal server; history at rest stays encrypted. The gateway's codec endpoint lets the
 * Temporal UI show decrypted payloads to operators who may hold the key.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

const ENCODING = 'binary/encrypted';
const KEY_ID = 'encryption-key-id';
const utf8 = (text: string) => new TextEncoder().encode(text);

/** AES-GCM's full tag, and the only length accepted. */
const TAG_BYTES = 16;

export class EncryptionCodec implements PayloadCodec {
  readonly keyId: string;

  constructor(private readonly key: Buffer) {
    this.keyId = createHash('sha256').update(key).digest('hex').slice(0, 16);
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return {
        metadata: { encoding: utf8(ENCODING), [KEY_ID]: utf8(this.keyId) },
        data: Buffer.concat([iv, cipher.getAuthTag(), body]),
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.encoding ? new TextDecoder().decode(payload.metadata.encoding) : '';
      if (encoding !== ENCODING || !payload.data) return payload;
      const keyId = payload.metadata?.[KEY_ID] ? new TextDecoder().decode(payload.metadata[KEY_ID]) : '';
      if (keyId !== this.keyId)
        throw new Error(`payload encrypted with key ${keyId}, but PAYLOAD_KEY is key ${this.keyId}`);
      const data = Buffer.from(payload.data);
      if (data.length < 12 + TAG_BYTES) throw new Error('encrypted payload too short to hold its IV and tag');
      // The tag's length is fixed: GCM would otherwise accept a 4-byte tag, which can be forged by trying.
      const decipher = createDecipheriv('aes-256-gcm', this.key, data.subarray(0, 12), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAuthTag(data.subarray(12, 28));
      const plain = Buffer.concat([decipher.update(data.subarray(28)), decipher.final()]);
      return temporal.api.common.v1.Payload.decode(plain) as Payload;
    });
  }
}

export function payloadKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32)
    throw new Error(
      'PAYLOAD_KEY must be 32 bytes, as 64 hex characters or base64 (e.g. `openssl rand -base64 32`)',
    );
  return key;
}

/** The data converter for clients and workers: encrypting when PAYLOAD_KEY is set, the default otherwise. */
export function dataConverterFor(payloadKeyText: string | undefined): DataConverter | undefined {
  return payloadKeyText ? { payloadCodecs: [new EncryptionCodec(payloadKey(payloadKeyText))] } : undefined;
}

/** The codec server's JSON form of payloads (base64 metadata values and data), as the Temporal UI sends it. */
export interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

export function fromJson(payload: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
    ),
    data: Buffer.from(payload.data ?? '', 'base64'),
  };
}

export function toJson(payload: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([k, v]) => [
        k,
        Buffer.from(v ?? new Uint8Array()).toString('base64'),
      ]),
    ),
    data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
  };
}
