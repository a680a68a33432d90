/**
 * The worker-side store of transcript chunks (common/transcript-chunks.ts): each message a model call carried
 * whole, kept under its link so later calls can name the prefix it ends. Each chunk is encrypted with a key
 * derived from the vault's master key (VAULT_KEY or the vault's key file) and bound to its conversation and link,
 * so the store at rest holds no readable transcript and one conversation's chunk cannot stand in for another's.
 * Chunks unused for TRANSCRIPT_CHUNK_RETENTION are dropped; a call naming one is refused and the session sends its
 * messages whole again.
 */
import { createHash, hkdfSync } from 'node:crypto';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import {
  chunkText,
  linkText,
  TRANSCRIPT_CHUNKS_MISSING,
  type ChunkedTranscript,
} from '../../common/transcript-chunks';
import type { Message } from '../../workflows/session/contract';
import { loadMasterKey } from '../credentials/keys';
import { VaultCipher } from '../credentials/vault';
import type { ChunkBackend, StoredChunk } from './backend';
import { PgChunkStore } from './pg';
import { SqliteChunkStore } from './sqlite';

export type { ChunkBackend, StoredChunk } from './backend';

export interface TranscriptStoreOptions {
  /** Where the vault's key file is (and the SQLite store goes without DATABASE_URL). */
  dataDir: string;
  vaultKey: string | undefined;
  /** PostgreSQL (shared by every worker) instead of DATA_DIR/transcripts.sqlite. */
  databaseUrl: string | undefined;
  retentionMs: number;
  now?: () => number;
}

const sealContext = (scope: string, link: string) => `transcript-chunk\n${scope}\n${link}`;
const hex = (text: string) => createHash('sha256').update(text).digest('hex');

export class TranscriptStore {
  private readonly cipher: VaultCipher;
  private prunedAt = 0;

  constructor(
    private readonly backend: ChunkBackend,
    key: Buffer,
    private readonly retentionMs: number,
    private readonly onError: (message: string, error: unknown) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {
    this.cipher = new VaultCipher(key);
  }

  static open(
    options: TranscriptStoreOptions,
    onError?: (message: string, error: unknown) => void,
  ): TranscriptStore {
    const master = loadMasterKey({ vaultKey: options.vaultKey, dataDir: options.dataDir });
    const key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'agent-transcript-chunks-v1', 32));
    const backend = options.databaseUrl
      ? new PgChunkStore(options.databaseUrl)
      : new SqliteChunkStore(path.join(options.dataDir, 'transcripts.sqlite'));
    return new TranscriptStore(backend, key, options.retentionMs, onError, options.now);
  }

  /**
   * The request's messages in order, and the last link: the named prefix read back, the whole messages kept.
   * A prefix the store does not hold (whole) fails the call, not retried: the session sends everything whole.
   */
  async resolve(
    scope: string,
    request: ChunkedTranscript,
  ): Promise<{ transcript: Message[]; lastLink?: string }> {
    const now = this.now();
    await this.pruneOnceAnHour(now);
    const earlier = request.prefix ? await this.prefix(scope, request.prefix, now) : [];
    let link = request.prefix?.link ?? '';
    const fresh: StoredChunk[] = [];
    for (const message of request.messages) {
      const parent = link;
      const text = chunkText(message);
      link = hex(linkText(parent, hex(text)));
      fresh.push({ link, parent, sealed: this.cipher.seal(text, sealContext(scope, link)) });
    }
    const transcript = [...earlier, ...request.messages];
    if (!fresh.length) return { transcript, lastLink: link };
    try {
      await this.backend.put(scope, fresh, now);
      return { transcript, lastLink: link };
    } catch (error) {
      // The call goes on without the store (the next one carries these messages whole again).
      this.onError('the transcript store could not keep a call’s messages', error);
      return { transcript };
    }
  }

  async close(): Promise<void> {
    await this.backend.close();
  }

  private async prefix(
    scope: string,
    prefix: { link: string; length: number },
    now: number,
  ): Promise<Message[]> {
    const chain = await this.backend.chain(scope, prefix.link, prefix.length, now).catch((error: unknown) => {
      this.onError('the transcript store could not be read', error);
      return [];
    });
    const messages: Message[] = [];
    for (const chunk of chain) {
      const message = this.cipher.openJson<Message>(chunk.sealed, sealContext(scope, chunk.link));
      if (!message) break;
      messages.push(message);
    }
    // Whole, and starting where a chain starts: anything less is a prefix this store does not hold.
    if (messages.length !== prefix.length || chain.at(-1)?.parent !== '')
      throw ApplicationFailure.nonRetryable(
        `this worker's transcript store does not hold the ${prefix.length} earlier messages the call names`,
        TRANSCRIPT_CHUNKS_MISSING,
      );
    return messages.reverse();
  }

  private async pruneOnceAnHour(now: number): Promise<void> {
    if (now - this.prunedAt < 3_600_000) return;
    this.prunedAt = now;
    await this.backend.prune(now - this.retentionMs).catch(() => {});
  }
}
