/**
 * A model call's transcript passed by reference (issue 36), so a call's input in history costs what the
 * conversation added since the last call, not the whole window again.
 *
 * The messages of a request form a chain: link i is SHA-256(link i-1 + "\n" + SHA-256(JSON of message i)), from
 * an empty start. The worker keeps every message it was sent whole in its transcript store
 * (infra/transcript-store), under its link; a later request names the longest prefix the store holds by its last
 * link and length, and carries only the messages after it. A worker whose store does not hold the prefix (another
 * host's store, a pruned chunk) refuses the call with `TranscriptChunksMissing`, and the session sends every
 * message whole once. The worker answers with the last link it computed; a session whose own differs stops naming
 * prefixes (it never sends a reference the two sides read differently).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import type { Message } from '../workflows/session/contract';

export interface ChunkedTranscript {
  /** The first `length` messages, held by the worker's store, named by the link of the last one. */
  prefix?: { link: string; length: number };
  /** The messages after the prefix, whole. */
  messages: Message[];
}

/** The failure type of a call that named a prefix its worker does not hold. */
export const TRANSCRIPT_CHUNKS_MISSING = 'TranscriptChunksMissing';

/** What a message's digest is taken over: its JSON as the payload converter writes it (keys in insertion order). */
export function chunkText(message: Message): string {
  return JSON.stringify(message);
}

/** What the next link's digest is taken over. */
export function linkText(previousLink: string, messageDigest: string): string {
  return `${previousLink}\n${messageDigest}`;
}

/**
 * SHA-256 of `text`, hex (pure JS: workflow code has no node:crypto). Workers share this module, and so the
 * hash code, among all cached workflows (workers/workflow-code.ts); it is synchronous, so its scratch buffers
 * are never used by two workflows at once.
 */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}
