/**
 * The session's side of transcript chunks (common/transcript-chunks.ts): which links the worker's store holds, as
 * this run knows it. A link counts as held once a call that carried its message completed and the worker computed
 * the same last link; a refusal for a missing prefix forgets them all. Message digests are computed once per
 * message object (the context window reuses the transcript's objects), with a pure-JS SHA-256: workflow code has
 * no node:crypto.
 */
import {
  chunkText,
  linkText,
  sha256Hex as hex,
  type ChunkedTranscript,
} from '../../common/transcript-chunks';
import type { Message } from './contract';

export interface ChunkedRequest {
  transcript: ChunkedTranscript;
  /** Every message's link, for `stored`. */
  links: string[];
}

export class TranscriptChunks {
  private readonly digests = new WeakMap<Message, string>();
  private held = new Set<string>();
  /** Set when the worker computed another last link: this run sends every message whole from then on. */
  private disagreed = false;

  /** The request's transcript: the longest prefix the store holds by reference, the rest whole. */
  requestOf(messages: readonly Message[]): ChunkedRequest {
    const links: string[] = [];
    let link = '';
    for (const message of messages) {
      link = hex(linkText(link, this.digestOf(message)));
      links.push(link);
    }
    let length = 0;
    if (!this.disagreed)
      for (let i = links.length - 1; i >= 0; i--)
        if (this.held.has(links[i]!)) {
          length = i + 1;
          break;
        }
    return {
      transcript: {
        ...(length ? { prefix: { link: links[length - 1]!, length } } : {}),
        messages: messages.slice(length),
      },
      links,
    };
  }

  /** The call completed; `workerLink` is the last link the worker kept (absent: its store could not keep them). */
  stored(links: readonly string[], workerLink: string | undefined): void {
    if (!links.length || workerLink === undefined) return;
    if (workerLink !== links.at(-1)) {
      this.disagreed = true;
      this.held = new Set();
      return;
    }
    for (const link of links) this.held.add(link);
  }

  /** The worker did not hold a prefix this run named: the next call carries every message whole. */
  forget(): void {
    this.held = new Set();
  }

  private digestOf(message: Message): string {
    let digest = this.digests.get(message);
    if (digest === undefined) {
      digest = hex(chunkText(message));
      this.digests.set(message, digest);
    }
    return digest;
  }
}
