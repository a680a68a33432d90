/**
 * A conversation longer than the model's context window keeps being answered: requests are built within the
 * policy's `contextTokens`, older turns are summarised into a durable synthetic summary, and a provider's
 * "too long" refusal makes the turn summarise harder and try once more. Driven against strict fake OpenAI and
 * Anthropic servers that refuse, like the real ones, requests longer than their window and split tool pairs.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeAnthropic, type MessagesRequest } from '../helpers/fake-anthropic';
import { FakeOpenAi, type ChatRequest } from '../helpers/fake-openai';
import { TestSession } from '../helpers/session';
import { startTestTemporal } from '../helpers/temporal';
import { withWorker } from '../helpers/worker';
import type { Message, SessionView } from '../../workflows/session/contract';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startTestTemporal();
});
afterAll(async () => {
  await env?.teardown();
});

const SUMMARY_PROMPT = '[summarise]';
const filler = (i: number) => `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(100)}`;

function openAiReply(request: ChatRequest, index: number) {
  const last = request.messages.at(-1)!;
  if (typeof last.content === 'string' && last.content.startsWith(SUMMARY_PROMPT))
    return { text: `Summary #${index}: alice sent numbered lorem ipsum messages.` };
  // A tool step now and then, so the window has call/result pairs to keep together.
  if (last.role === 'user' && index % 3 === 0)
    return { toolCalls: [{ id: `call_${index}`, name: 'current_time', args: {} }] };
  return { text: `answer ${index}` };
}

async function converse(s: TestSession, count: number): Promise<SessionView> {
  let view: SessionView | undefined;
  for (let i = 0; i < count; i++) {
    await s.say(filler(i));
    view = await s.waitFor(
      (v) =>
        v.status === 'idle' &&
        v.queued === 0 &&
        v.transcript.filter((m) => m.role === 'user').length === i + 1 &&
        v.transcript.at(-1)?.role === 'assistant',
      `the answer to message ${i}`,
      60_000,
    );
  }
  return view!;
}

const answers = (view: SessionView) =>
  view.transcript.filter((m) => m.role === 'assistant' && !m.synthetic && m.text.startsWith('answer'));
const summaries = (view: SessionView) =>
  view.transcript.filter(
    (m): m is Extract<Message, { role: 'assistant' }> => m.role === 'assistant' && !!m.summary,
  );

describe('a conversation longer than the context window', () => {
  it('is answered turn after turn with OpenAI, older turns summarised, every message kept', async () => {
    const fake = await new FakeOpenAi(openAiReply, { latency: [20, 60], contextTokens: 9_000 }).start();
    try {
      await withWorker(
        env,
        async (taskQueue) => {
          const s = new TestSession(env.client, taskQueue);
          const view = await converse(s, 14);
          expect(fake.contextRefusals).toEqual([]);
          expect(fake.refusals).toEqual([]);
          expect(answers(view)).toHaveLength(14);
          expect(view.transcript.some((m) => m.role === 'assistant' && m.text.startsWith('⚠️'))).toBe(false);
          // The full transcript is kept; the model saw a summary instead of the oldest turns.
          expect(view.transcript.filter((m) => m.role === 'user')).toHaveLength(14);
          const made = summaries(view);
          expect(made.length).toBeGreaterThan(0);
          expect(made.every((m) => m.synthetic && m.text.startsWith('Summary #'))).toBe(true);
          const lastRequest = fake.requests.at(-1)!;
          expect(lastRequest.messages[1]!.content).toContain('[Summary of the earlier conversation');
          expect(JSON.stringify(lastRequest)).not.toContain('message 0:');
        },
        { contextTokens: 8_000 },
        { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'k' },
      );
    } finally {
      await fake.stop();
    }
  });

  it('summarises and tries once more when the provider says the request is too long', async () => {
    // The policy claims a window twice the model's real one: requests grow until the API refuses one.
    const fake = await new FakeOpenAi(openAiReply, { latency: [20, 60], contextTokens: 7_000 }).start();
    try {
      await withWorker(
        env,
        async (taskQueue) => {
          const s = new TestSession(env.client, taskQueue);
          const view = await converse(s, 10);
          expect(fake.contextRefusals.length).toBeGreaterThan(0);
          expect(answers(view)).toHaveLength(10);
          expect(view.transcript.some((m) => m.role === 'assistant' && m.text.startsWith('⚠️'))).toBe(false);
          expect(summaries(view).length).toBeGreaterThan(0);
          // Every refused request was followed by one that the API took.
          for (const index of fake.contextRefusals)
            expect(fake.contextRefusals.includes(index + 1) && fake.contextRefusals.includes(index + 2)).toBe(
              false,
            );
        },
        { contextTokens: 14_000 },
        { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'k' },
      );
    } finally {
      await fake.stop();
    }
  });

  it('is answered with Anthropic too, the summary opening each request as a user turn', async () => {
    const textOf = (message: MessagesRequest['messages'][number]) =>
      typeof message.content === 'string'
        ? message.content
        : message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    const fake = await new FakeAnthropic(
      (request, index) =>
        textOf(request.messages.at(-1)!).startsWith(SUMMARY_PROMPT)
          ? { text: `Summary #${index}: numbered messages from alice.` }
          : { text: `answer ${index}` },
      { latency: [20, 60], contextTokens: 9_000 },
    ).start();
    try {
      await withWorker(
        env,
        async (taskQueue) => {
          const s = new TestSession(env.client, taskQueue);
          const view = await converse(s, 12);
          expect(fake.contextRefusals).toEqual([]);
          expect(fake.refusals).toEqual([]);
          expect(answers(view)).toHaveLength(12);
          expect(summaries(view).length).toBeGreaterThan(0);
          const first = fake.requests.at(-1)!.messages[0]!;
          expect(first.role).toBe('user');
          expect(textOf(first)).toContain('[Summary of the earlier conversation');
        },
        { contextTokens: 8_000 },
        { MODEL_PROVIDER: 'anthropic', ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'k' },
      );
    } finally {
      await fake.stop();
    }
  });

  it("keeps a long turn's own request in every call, even after the turn is summarised twice", async () => {
    const INSTRUCTION =
      'Check the time 90 times, one call at a time, then answer with the word done and nothing else.';
    const STEPS = 90;
    const missing: number[] = [];
    let toolReplies = 0;
    // Like a careful real model: without the person's request for this turn it stops instead of guessing.
    const fake = await new FakeOpenAi(
      (request, index) => {
        const last = request.messages.at(-1)!;
        if (typeof last.content === 'string' && last.content.startsWith(SUMMARY_PROMPT))
          return { text: `Summary #${index}: alice asked things; the time was checked several times.` };
        if (last.role === 'user' && typeof last.content === 'string' && last.content.startsWith('message '))
          return { text: `answer ${index}` };
        if (!JSON.stringify(request.messages).includes(INSTRUCTION)) {
          missing.push(index);
          return { text: 'I no longer know what you asked me to do in this turn, so I stop here.' };
        }
        if (toolReplies >= STEPS) return { text: 'done' };
        toolReplies++;
        return { toolCalls: [{ id: `call_${index}`, name: 'current_time', args: {} }] };
      },
      { latency: [5, 20] },
    ).start();
    try {
      await withWorker(
        env,
        async (taskQueue) => {
          const s = new TestSession(env.client, taskQueue);
          await converse(s, 2);
          const before = summaries(await s.state()).length;
          await s.say(INSTRUCTION);
          const view = await s.waitFor(
            (v) =>
              v.status === 'idle' &&
              v.queued === 0 &&
              v.transcript.filter((m) => m.role === 'user').length === 3 &&
              v.transcript.at(-1)?.role === 'assistant',
            'the long turn to finish',
            120_000,
          );
          expect(missing).toEqual([]);
          const answer = view.transcript.at(-1)!;
          expect(answer.role === 'assistant' && answer.text).toBe('done');
          expect(view.transcript.filter((m) => m.role === 'tool' && m.name === 'current_time')).toHaveLength(
            STEPS,
          );
          expect(summaries(view).length - before).toBeGreaterThanOrEqual(2);
          // The last request: the summary, then the person's request verbatim, then the latest steps.
          const lastRequest = fake.requests.at(-1)!.messages.filter((m) => m.role !== 'system');
          expect(lastRequest[0]!.content).toContain('[Summary of the earlier conversation');
          expect(lastRequest[1]!.content).toBe(INSTRUCTION);
        },
        { contextTokens: 4_000, maxSteps: 100 },
        { MODEL_PROVIDER: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'k' },
      );
    } finally {
      await fake.stop();
    }
  });
});
