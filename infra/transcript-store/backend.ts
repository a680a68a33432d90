/** What a transcript store keeps its sealed chunks in: SQLite (sqlite.ts) or PostgreSQL (pg.ts). */
export interface StoredChunk {
  link: string;
  parent: string;
  sealed: Uint8Array;
}

/** How a backend keeps sealed chunks: by conversation and link, each pointing at the link before it. */
export interface ChunkBackend {
  put(scope: string, chunks: StoredChunk[], now: number): Promise<void>;
  /** The chain ending at `link`, newest first, at most `length` chunks (fewer when a link is missing). */
  chain(scope: string, link: string, length: number, now: number): Promise<StoredChunk[]>;
  prune(olderThan: number): Promise<number>;
  close(): Promise<void>;
}
