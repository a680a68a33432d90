/**
 * The transcript store (infra/transcript-store): what a model call names is read back exactly, or the call is
 * refused as missing chunks; never another conversation's messages, a tampered chunk, or a chain with a hole.
 */
import { DatabaseSync } from 'node:sqlite';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TRANSCRIPT_CHUNKS_MISSING } from '../../common/transcript-chunks';
import { TranscriptStore } from '../../infra/transcript-store/store';
import { TranscriptChunks } from '../../workflows/session/transcript-chunks';
import type { Message } from '../../workflows/session/contract';
import { tempDir } from '../helpers/config';

const message = (i: number): Message => ({
  role: 'user',
  id: `m${i}`,
  userId: 'alice',
  text: `message ${i}`,
  at: i,
});
const DAY = 86_400_000;

function open(dataDir = tempDir('chunks-')) {
  const store = TranscriptStore.open({
    dataDir,
    vaultKey: undefined,
    databaseUrl: undefined,
    retentionMs: 30 * DAY,
  });
  return { store, dataDir };
}

async function refusal(promise: Promise<unknown>): Promise<string | undefined> {
  return await promise.then(
    () => undefined,
    (error: { type?: string }) => error.type,
  );
}

describe('the transcript store', () => {
  it('gives back exactly the messages a prefix names, as the workflow computes the links', async () => {
    const { store } = open();
    const session = new TranscriptChunks();
    const messages = [1, 2, 3].map(message);
    const first = session.requestOf(messages);
    expect(first.transcript.prefix).toBeUndefined();
    const kept = await store.resolve('conversation-a', first.transcript);
    expect(kept.transcript).toEqual(messages);
    session.stored(first.links, kept.lastLink);
    messages.push(message(4));
    const second = session.requestOf(messages);
    expect(second.transcript.prefix).toEqual({ link: first.links[2], length: 3 });
    expect(second.transcript.messages).toEqual([message(4)]);
    const read = await store.resolve('conversation-a', second.transcript);
    expect(read.transcript).toEqual(messages);
    expect(read.lastLink).toBe(second.links[3]);
  });

  it('refuses a prefix of another conversation, a tampered chunk and a chain with a hole', async () => {
    const { store, dataDir } = open();
    const session = new TranscriptChunks();
    const messages = [1, 2, 3, 4].map(message);
    const request = session.requestOf(messages);
    const kept = await store.resolve('conversation-a', request.transcript);
    session.stored(request.links, kept.lastLink);
    const named = session.requestOf([...messages, message(5)]).transcript;
    // Another conversation naming the same link.
    expect(await refusal(store.resolve('conversation-b', named))).toBe(TRANSCRIPT_CHUNKS_MISSING);
    // A longer prefix than the chain holds.
    expect(
      await refusal(store.resolve('conversation-a', { ...named, prefix: { ...named.prefix!, length: 9 } })),
    ).toBe(TRANSCRIPT_CHUNKS_MISSING);
    const db = new DatabaseSync(path.join(dataDir, 'transcripts.sqlite'));
    // A chunk moved to another conversation does not decrypt there.
    db.prepare("UPDATE transcript_chunks SET scope = 'conversation-b' WHERE link = ?").run(request.links[1]!);
    db.prepare(
      "INSERT INTO transcript_chunks SELECT 'conversation-b', link, parent, sealed, used_at FROM transcript_chunks WHERE scope = 'conversation-a'",
    ).run();
    expect(await refusal(store.resolve('conversation-b', named))).toBe(TRANSCRIPT_CHUNKS_MISSING);
    // A hole in the chain (the second message gone from conversation a).
    expect(await refusal(store.resolve('conversation-a', named))).toBe(TRANSCRIPT_CHUNKS_MISSING);
    db.close();
  });

  it('drops chunks unused for the retention period; a call naming them is refused, then sent whole', async () => {
    let now = Date.UTC(2026, 0, 1);
    const store = TranscriptStore.open({
      dataDir: tempDir('chunks-'),
      vaultKey: undefined,
      databaseUrl: undefined,
      retentionMs: 30 * DAY,
      now: () => now,
    });
    const session = new TranscriptChunks();
    const first = session.requestOf([message(1)]);
    session.stored(first.links, (await store.resolve('a', first.transcript)).lastLink);
    now += 31 * DAY;
    const named = session.requestOf([message(1), message(2)]);
    expect(named.transcript.prefix?.length).toBe(1);
    expect(await refusal(store.resolve('a', named.transcript))).toBe(TRANSCRIPT_CHUNKS_MISSING);
    session.forget();
    const whole = session.requestOf([message(1), message(2)]);
    expect(whole.transcript.prefix).toBeUndefined();
    expect((await store.resolve('a', whole.transcript)).transcript).toEqual([message(1), message(2)]);
  });
});
