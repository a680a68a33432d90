import { describe, expect, it } from 'vitest';
import { fromJsonl, toJsonl } from '../../common/transcript-format';
import { requestOrder } from '../../activities/model/request-order';
import { validateMessages } from '../helpers/fake-anthropic';
import { toAnthropic } from '../../activities/model/anthropic';
import type { Message } from '../../workflows/session/contract';
import { buildContextWindow, estimateTokens, isSummary } from '../../workflows/session/context-window';

const at = Date.UTC(2026, 10, 25);
let n = 0;
const user = (text: string): Message => ({ role: 'user', id: `u${n++}`, userId: 'alice', text, at });
const assistant = (text: string, calls: string[] = []): Message => ({
  role: 'assistant',
  id: `a${n++}`,
  text,
  toolCalls: calls.map((id) => ({ id, name: 'shell_execute', args: { command: 'ls' } })),
  at,
});
const result = (call: string, content: string): Message => ({
  role: 'tool',
  id: `r${n++}`,
  toolCallId: call,
  name: 'shell_execute',
  status: 'ok',
  content,
  at,
});
const summaryOf = (throughId: string, text: string): Message => ({
  role: 'assistant',
  id: `s${n++}`,
  text,
  toolCalls: [],
  at,
  synthetic: true,
  summary: { throughId },
});
const tokens = (messages: Message[]) => messages.reduce((sum, m) => sum + estimateTokens(m), 0);

/** A conversation of `turns` turns, each a user message, a tool call, its result and an answer. */
function conversation(turns: number, size = 2_000): Message[] {
  return Array.from({ length: turns }, (_, i) => [
    user(`question ${i} ${'q'.repeat(size)}`),
    assistant(`looking ${i}`, [`c${i}`]),
    result(`c${i}`, `output ${i} ${'o'.repeat(size)}`),
    assistant(`answer ${i}`),
  ]).flat();
}

/** Every call in a request has its result right after it, and every result follows its call. */
function pairsIntact(messages: Message[]): boolean {
  return validateMessages(toAnthropic(messages) as Parameters<typeof validateMessages>[0]) === undefined;
}

describe('the context window', () => {
  it('sends a short conversation whole, with nothing to summarise', () => {
    const transcript = conversation(3, 100);
    const window = buildContextWindow(transcript, 32_000);
    expect(window.messages).toEqual(transcript);
    expect(window.toSummarise).toEqual([]);
  });

  it('keeps the newest turns verbatim within the budget and hands the older ones to a summary', () => {
    const transcript = conversation(40);
    const window = buildContextWindow(transcript, 8_000);
    expect(window.estimatedTokens).toBeLessThanOrEqual(8_000);
    expect(window.toSummarise.length).toBeGreaterThan(0);
    expect(window.toSummarise.length + window.messages.length - 1).toBe(transcript.length);
    expect(window.messages.at(-1)).toEqual(transcript.at(-1));
    expect(window.summariseThroughId).toBe(window.toSummarise.at(-1)!.id);
    // Until a summary exists the request opens with a user turn that says what is left out.
    expect(window.messages[0]).toMatchObject({ role: 'user', userId: 'runtime' });
    expect(pairsIntact(window.messages)).toBe(true);
  });

  it('never splits a tool call from its result, wherever the budget falls', () => {
    const transcript = conversation(30, 700);
    for (let budget = 4_000; budget <= 20_000; budget += 250) {
      const window = buildContextWindow(transcript, budget);
      const first = window.messages.find((m) => !(m.role === 'user' && m.userId === 'runtime'));
      expect(first?.role).not.toBe('tool');
      expect(pairsIntact(window.messages)).toBe(true);
      expect(requestOrder(window.messages).some((m) => m.role === 'tool' && m.synthetic)).toBe(false);
    }
  });

  it('sends the summary first and only the messages after what it covers', () => {
    const transcript = conversation(6, 100);
    const through = transcript[11]!.id;
    transcript.push(summaryOf(through, 'alice asked six questions about ls'));
    transcript.push(user('and now?'));
    const window = buildContextWindow(transcript, 32_000);
    expect(window.messages[0]).toMatchObject({
      role: 'user',
      text: expect.stringContaining('alice asked six'),
    });
    expect(window.messages.slice(1)).toEqual(transcript.slice(12).filter((m) => !isSummary(m)));
    expect(window.toSummarise).toEqual([]);
  });

  it('summarises again from the previous summary once the conversation outgrows the window again', () => {
    const transcript = conversation(10);
    transcript.push(summaryOf(transcript[19]!.id, 'the first five turns'));
    transcript.push(...conversation(30));
    const window = buildContextWindow(transcript, 8_000);
    expect(window.previousSummary).toBe('the first five turns');
    expect(window.toSummarise[0]!.id).toBe(transcript[20]!.id);
    expect(window.toSummarise.some(isSummary)).toBe(false);
  });

  it('shortens a huge tool result for the request only, saying where the rest is', () => {
    const stored = result('big', 'x'.repeat(200_000));
    const transcript = [user('cat the log'), assistant('', ['big']), stored];
    const window = buildContextWindow(transcript, 8_000);
    const sent = window.messages.find((m) => m.role === 'tool');
    expect(sent?.role === 'tool' && sent.content.length).toBeLessThan(10_000);
    expect(sent?.role === 'tool' && sent.content).toContain('more characters are in the transcript');
    expect(stored.role === 'tool' && stored.content.length).toBe(200_000);
    expect(window.estimatedTokens).toBeLessThanOrEqual(8_000);
  });

  it('fits a single message larger than the whole window', () => {
    const transcript = [user('y'.repeat(100_000))];
    const window = buildContextWindow(transcript, 4_000);
    expect(tokens(window.messages)).toBeLessThanOrEqual(4_000);
    expect(window.messages[0]!.role).toBe('user');
  });

  it('fits a step of many large results by shortening each, keeping every pair', () => {
    const calls = Array.from({ length: 12 }, (_, i) => `m${i}`);
    const transcript = [
      user('run them all'),
      assistant('', calls),
      ...calls.map((c) => result(c, 'z'.repeat(20_000))),
    ];
    const window = buildContextWindow(transcript, 6_000);
    expect(tokens(window.messages)).toBeLessThanOrEqual(6_000);
    expect(window.messages.filter((m) => m.role === 'tool')).toHaveLength(12);
    expect(pairsIntact(window.messages)).toBe(true);
  });

  it("keeps a long turn's own request verbatim after the summary, summarising only its tool steps", () => {
    // One turn of 60 tool steps after a long conversation: the cut falls inside the turn, twice.
    const request = user('rename every file under src/ to kebab-case, then run the tests');
    const steps = Array.from({ length: 60 }, (_, i) => [
      assistant(`step ${i}`, [`t${i}`]),
      result(`t${i}`, `renamed file ${i} ${'r'.repeat(300)}`),
    ]).flat();
    let transcript: Message[] = [...conversation(4, 500), request];
    for (const [i, step] of steps.entries()) {
      transcript.push(step);
      const window = buildContextWindow(transcript, 4_000);
      // The runtime summarises when told to: the summary covers what it was handed, the request included.
      if (window.toSummarise.length)
        transcript = [...transcript, summaryOf(window.summariseThroughId!, `summary at step ${i}`)];
      const sent = buildContextWindow(transcript, 4_000).messages;
      const opening = sent.findIndex(
        (m) => m.role === 'user' && m.text === (request as { text: string }).text,
      );
      expect(opening, `the request is sent verbatim at step ${i}`).toBeGreaterThanOrEqual(0);
      expect(sent.slice(opening + 1).some((m) => m.role === 'user')).toBe(false);
      expect(pairsIntact(sent)).toBe(true);
      expect(tokens(sent)).toBeLessThanOrEqual(4_000);
    }
    const made = transcript.filter(isSummary);
    expect(made.length).toBeGreaterThanOrEqual(2);
    // After the summaries the request still opens the turn, right after the summary, ahead of the recent steps.
    const last = buildContextWindow(transcript, 4_000).messages;
    expect(last[0]!.role === 'user' && last[0]!.text).toContain('[Summary of the earlier conversation');
    expect(last[1]).toEqual(request);
    expect(last[2]!.role).toBe('assistant');
  });

  it('shortens a pinned request larger than its share, saying so', () => {
    const request = user(`deploy ${'p'.repeat(40_000)}`);
    const steps = Array.from({ length: 40 }, (_, i) => [
      assistant(`step ${i}`, [`p${i}`]),
      result(`p${i}`, 'x'.repeat(400)),
    ]).flat();
    const transcript: Message[] = [request, ...steps];
    transcript.push(summaryOf(transcript[transcript.length - 10]!.id, 'earlier steps'));
    const sent = buildContextWindow(transcript, 4_000).messages;
    const pinned = sent[1]!;
    expect(pinned.role === 'user' && pinned.text.startsWith('deploy ppp')).toBe(true);
    expect(pinned.role === 'user' && pinned.text).toContain("shortened for the model's context");
    expect(tokens(sent)).toBeLessThanOrEqual(4_000);
  });

  it('keeps a summary through an export and an import of the transcript', () => {
    const transcript = conversation(2, 10);
    transcript.push(summaryOf(transcript[3]!.id, 'the first turn'));
    const imported = fromJsonl(toJsonl(transcript));
    expect(imported.ok && imported.messages.at(-1)).toEqual(transcript.at(-1));
  });
});
