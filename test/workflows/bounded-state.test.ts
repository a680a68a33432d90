/**
 * State stays bounded whatever people and models send: the inbox refuses messages past its limits (and says
 * so), a tool call with huge arguments gets an error result instead of a place in the history, and the
 * transcript carried into the next run stays under one payload's limit. The history stays far below
 * Temporal's limits with 200 messages of 20,000 characters sent while a turn runs.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userMessageSignal, type Message } from '../../workflows/session/contract';
import {
  carriedTranscript,
  MAX_CARRIED_TRANSCRIPT_CHARS,
  MAX_QUEUED_MESSAGES,
} from '../../workflows/session/state';
import { FakeOpenAi } from '../helpers/fake-openai';
import { TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { withWorker } from '../helpers/worker';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

const HISTORY_LIMIT_BYTES = 50 * 1024 * 1024;
const HISTORY_LIMIT_EVENTS = 51_200;

describe('bounded state', () => {
  it('keeps the session healthy when 200 messages of 20,000 characters arrive while a turn runs', async () => {
    await withWorker(env, async (taskQueue) => {
      const s = new TestSession(env.client, taskQueue);
      await s.say('run `ls -la`');
      const [gate] = await s.pendingGate();
      // bob floods the conversation while alice's approval is open (his messages do not end her turn).
      const flood = Array.from({ length: 200 }, (_, i) => `flood ${i} ${'x'.repeat(20_000 - 12)}`);
      for (let i = 0; i < flood.length; i += 20)
        await Promise.all(
          flood
            .slice(i, i + 20)
            .map((text) =>
              s.handle.signal(userMessageSignal, { messageId: randomUUID(), userId: 'bob', text }),
            ),
        );
      const flooded = await s.waitFor(
        (v) => v.notices.some((n) => n.to === 'bob' && n.text.includes('(nor 180 before it)')),
        'bob to be told his messages were not queued',
      );
      expect(flooded.queued).toBeLessThanOrEqual(MAX_QUEUED_MESSAGES);
      expect(flooded.queued).toBeGreaterThan(0);
      // Told at the first refusal and every tenth after, not 190 times.
      const told = flooded.notices.filter(
        (n) => n.to === 'bob' && n.text.startsWith('Your message was not queued'),
      );
      expect(told).toHaveLength(19);
      expect(told[0]!.text).toMatch(/limit is/);
      expect(flooded.gates.find((g) => g.id === gate!.id)?.status).toBe('pending');

      const described = await s.handle.describe();
      expect(described.historyLength).toBeLessThan(HISTORY_LIMIT_EVENTS / 10);
      // The 200 signals themselves are in the history (about 4 MB); nothing else grew with them.
      expect(described.historySize).toBeGreaterThan(4_000_000);
      expect(described.historySize).toBeLessThan(HISTORY_LIMIT_BYTES / 5);

      // The turn goes on, the queued messages are answered in order, and a later message still is.
      await s.decide({ gateId: gate!.id, choice: 'approve' });
      await s.waitFor((v) => v.status === 'idle' && v.queued === 0, 'the queue to drain', 120_000);
      await s.say('what time is it', 'bob');
      const after = await s.waitFor(
        (v) => v.status === 'idle' && v.transcript.at(-2)?.role === 'tool' && v.queued === 0,
        'bob answered after the flood',
        60_000,
      );
      const users = after.transcript.filter((m) => m.role === 'user');
      expect(users.at(-1)).toMatchObject({ userId: 'bob', text: 'what time is it' });
      const flooded_ = users.filter((m) => m.role === 'user' && m.text.startsWith('flood '));
      expect(flooded_.length).toBe(flooded.queued);
      // Each queued message became exactly one turn (the 20 sent at once arrive in any order).
      expect(new Set(flooded_.map((m) => m.id)).size).toBe(flooded_.length);
    });
  });

  it('answers a tool call with huge arguments with an error the model can act on, and asks nobody', async () => {
    const fake = await new FakeOpenAi(
      (_request, index) =>
        index === 0
          ? {
              toolCalls: [
                { id: 'huge', name: 'shell_execute', args: { command: `echo ${'y'.repeat(40_000)}` } },
              ],
            }
          : { text: 'understood' },
      { latency: [20, 60] },
    ).start();
    try {
      await withWorker(
        env,
        async (taskQueue) => {
          const s = new TestSession(env.client, taskQueue);
          await s.say('echo a lot');
          const view = await s.idle();
          const result = view.transcript.find((m) => m.role === 'tool');
          expect(result).toMatchObject({ status: 'error', toolCallId: 'huge' });
          expect(result?.role === 'tool' && result.content).toMatch(/characters long; the limit is 16,000/);
          expect(view.gates).toEqual([]);
          const history = JSON.stringify((await s.handle.fetchHistory()).events);
          expect(history).not.toContain('y'.repeat(20_000));
        },
        {},
        { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'k' },
      );
    } finally {
      await fake.stop();
    }
  });

  it('carries only the newest part of a huge transcript into the next run, starting at a user turn', () => {
    const at = Date.UTC(2026, 10, 25);
    const transcript: Message[] = [];
    for (let i = 0; i < 200; i++) {
      transcript.push({ role: 'user', id: `u${i}`, userId: 'alice', text: 'p'.repeat(20_000), at });
      transcript.push({
        role: 'assistant',
        id: `a${i}`,
        text: '',
        toolCalls: [{ id: `c${i}`, name: 'current_time', args: {} }],
        at,
      });
      transcript.push({
        role: 'tool',
        id: `r${i}`,
        toolCallId: `c${i}`,
        name: 'current_time',
        status: 'ok',
        content: 'now',
        at,
      });
      if (i === 10)
        transcript.push({
          role: 'assistant',
          id: 's10',
          text: 'summary of the first ten',
          toolCalls: [],
          at,
          synthetic: true,
          summary: { throughId: 'r10' },
        });
    }
    let n = 0;
    const carried = carriedTranscript(transcript, 'run-1', () => `id${n++}`);
    expect(JSON.stringify(carried).length).toBeLessThan(MAX_CARRIED_TRANSCRIPT_CHARS + 50_000);
    expect(carried[0]).toMatchObject({ id: 's10' });
    expect(carried[1]).toMatchObject({ synthetic: true, text: expect.stringContaining('run run-1') });
    expect(carried[2]!.role).toBe('user');
    expect(carried.at(-1)).toEqual(transcript.at(-1));
    expect(carriedTranscript(transcript.slice(0, 9), 'run-1', () => 'x')).toEqual(transcript.slice(0, 9));
  });
});
