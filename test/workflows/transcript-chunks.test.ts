/**
 * A model call's transcript goes by reference (common/transcript-chunks.ts): history grows by what each turn adds,
 * not by the whole conversation again, while the model still receives every message, in order. A worker whose
 * store lacks the chunks (another host, a lost data directory) answers anyway, and PostgreSQL shares one store
 * between workers. Driven against the strict fake OpenAI server, on the real Temporal dev server.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSCRIPT_CHUNKS_MISSING } from '../../common/transcript-chunks';
import { FakeOpenAi, type ChatRequest } from '../helpers/fake-openai';
import { testConfig } from '../helpers/config';
import { startPostgres, type TestPostgres } from '../helpers/postgres';
import { TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { createTestWorker } from '../helpers/worker';

let env: TestWorkflowEnvironment;
let postgres: TestPostgres;
beforeAll(async () => {
  [env, postgres] = await Promise.all([startTestTemporal(), startPostgres()]);
});
afterAll(async () => {
  await Promise.all([env?.teardown(), postgres?.stop()]);
});

/** Each message: a tool step (current_time), then an answer naming the request's index. */
function reply(request: ChatRequest, index: number) {
  const last = request.messages.at(-1)!;
  if (last.role === 'user') return { toolCalls: [{ id: `call_${index}`, name: 'current_time', args: {} }] };
  return { text: `answer ${index}` };
}

const userTexts = (request: ChatRequest) =>
  request.messages.filter((m) => m.role === 'user').map((m) => m.content as string);

async function turn(session: TestSession, text: string, count: number): Promise<void> {
  await session.say(text);
  await session.waitFor(
    (v) =>
      v.status === 'idle' &&
      v.queued === 0 &&
      v.transcript.filter((m) => m.role === 'user').length === count &&
      v.transcript.at(-1)?.role === 'assistant',
    `the answer to message ${count}`,
  );
}

/** The callModel activities the run scheduled: the size of each one's input, and how each attempt ended. */
async function modelCalls(session: TestSession) {
  const events = (await session.handle.fetchHistory()).events ?? [];
  const inputs = events.flatMap((event) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'callModel') return [];
    return [
      temporal.api.common.v1.Payloads.encode(
        temporal.api.common.v1.Payloads.fromObject(scheduled.input ?? {}),
      ).finish().length,
    ];
  });
  const failures = events.flatMap((event) => {
    const failure = event.activityTaskFailedEventAttributes?.failure;
    return failure ? [failure.applicationFailureInfo?.type ?? ''] : [];
  });
  return { inputs, failures };
}

describe('transcript chunks', () => {
  it('grow history by what each turn adds, while the model receives the whole conversation in order', async () => {
    const fake = await new FakeOpenAi(reply, { latency: [5, 20] }).start();
    const config = testConfig({}, fake.env);
    const { worker, taskQueue } = await createTestWorker(env, config);
    await worker.runUntil(async () => {
      const session = new TestSession(env.client, taskQueue);
      const said: string[] = [];
      for (let i = 1; i <= 24; i++) {
        said.push(`message ${i}: ${'the quick brown fox '.repeat(20)}`);
        await turn(session, said.at(-1)!, i);
      }
      expect(fake.refusals).toEqual([]);
      // Every request carried every message said so far, in order (the store gave back exactly what was sent).
      for (const request of fake.requests) {
        const seen = userTexts(request);
        expect(seen).toEqual(said.slice(0, seen.length));
      }
      expect(userTexts(fake.requests.at(-1)!)).toEqual(said);
      // Two calls per turn; the input of turn 24's calls is no larger than turn 4's, give or take the digits.
      const { inputs, failures } = await modelCalls(session);
      expect(failures).toEqual([]);
      expect(inputs).toHaveLength(48);
      const early = inputs[6]! + inputs[7]!;
      const late = inputs[46]! + inputs[47]!;
      expect(late).toBeLessThan(early * 1.2);
      // The first call carries the message whole, the second names it.
      expect(inputs[0]).toBeGreaterThan(400);
    });
    // The store at rest holds no readable message.
    const store = readFileSync(path.join(path.dirname(config.credentials.vaultPath), 'transcripts.sqlite'));
    expect(store.includes(Buffer.from('the quick brown fox'))).toBe(false);
    await fake.stop();
  });

  it('answer on a worker whose store lacks the chunks, with every earlier message, and share one store in PostgreSQL', async () => {
    const fake = await new FakeOpenAi(reply, { latency: [5, 20] }).start();
    const databaseUrl = await postgres.createDatabase();
    const vaultKey = Buffer.alloc(32, 9).toString('base64');
    /** A worker of its own (own data directory) on `taskQueue`, for as long as `body` runs. */
    const withWorkerOn = async (
      taskQueue: string,
      extra: Record<string, string>,
      body: () => Promise<void>,
    ) => {
      const config = testConfig({}, { ...fake.env, ...extra });
      const { worker } = await createTestWorker(env, config, taskQueue);
      await worker.runUntil(body());
    };
    // SQLite stores: the second worker (its own data directory) holds none of the first one's chunks.
    const lostQueue = `chunks-${randomUUID()}`;
    const lost = new TestSession(env.client, lostQueue);
    await withWorkerOn(lostQueue, {}, async () => {
      await turn(lost, 'first', 1);
      await turn(lost, 'second', 2);
    });
    await withWorkerOn(lostQueue, {}, async () => {
      await turn(lost, 'third', 3);
      const warnings = (await lost.state()).transcript.filter(
        (m) => m.role === 'assistant' && m.text.startsWith('⚠️'),
      );
      expect(warnings).toEqual([]);
    });
    expect(userTexts(fake.requests.at(-1)!)).toEqual(['first', 'second', 'third']);
    expect((await modelCalls(lost)).failures).toEqual([TRANSCRIPT_CHUNKS_MISSING]);

    // One PostgreSQL store: a worker on another data directory reads the first one's chunks.
    const sharedQueue = `chunks-${randomUUID()}`;
    const shared = new TestSession(env.client, sharedQueue);
    const database = { DATABASE_URL: databaseUrl, VAULT_KEY: vaultKey };
    await withWorkerOn(sharedQueue, database, async () => {
      await turn(shared, 'one', 1);
      await turn(shared, 'two', 2);
    });
    await withWorkerOn(sharedQueue, database, async () => {
      await turn(shared, 'three', 3);
    });
    expect(userTexts(fake.requests.at(-1)!)).toEqual(['one', 'two', 'three']);
    expect((await modelCalls(shared)).failures).toEqual([]);
    await fake.stop();
  });
});
