/**
 * A model call's transcript read back from its chunks (common/transcript-chunks.ts). The store opens on first use
 * (a worker that never calls a model keeps none); one that cannot open (an unwritable DATA_DIR, a database down)
 * costs the calls their references, never the calls themselves.
 */
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { TRANSCRIPT_CHUNKS_MISSING, type ChunkedTranscript } from '../../common/transcript-chunks';
import type { AppConfig } from '../../infra/config';
import type { Logger } from '../../infra/log';
import { TranscriptStore } from '../../infra/transcript-store/store';
import type { Message } from '../../workflows/session/contract';

export type ResolveTranscript = (
  scope: string,
  request: ChunkedTranscript,
) => Promise<{ transcript: Message[]; lastLink?: string }>;

export function transcriptResolver(config: AppConfig, log: Logger): ResolveTranscript {
  let store: TranscriptStore | undefined;
  /** A store that would not open is tried again a minute later, not on every model call (nor logged each time). */
  let failedAt = -Infinity;
  const warn = (message: string, error: unknown) => log.warn(message, { error: (error as Error).message });
  const open = (): TranscriptStore | undefined => {
    if (!store && Date.now() - failedAt < 60_000) return undefined;
    try {
      return (store ??= TranscriptStore.open(
        {
          dataDir: path.dirname(config.credentials.vaultPath),
          vaultKey: config.credentials.vaultKey,
          databaseUrl: config.credentials.databaseUrl,
          retentionMs: config.transcriptChunkRetentionMs,
        },
        warn,
      ));
    } catch (error) {
      failedAt = Date.now();
      warn('the transcript store cannot be opened; model calls carry their messages whole', error);
      return undefined;
    }
  };
  return async (scope, request) => {
    const opened = open();
    if (opened) return await opened.resolve(scope, request);
    if (request.prefix)
      throw ApplicationFailure.nonRetryable('this worker has no transcript store', TRANSCRIPT_CHUNKS_MISSING);
    return { transcript: request.messages };
  };
}
