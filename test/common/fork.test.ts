/**
 * Where a fork cuts a transcript (common/fork.ts): never between a tool call and its result, calls still open at
 * the fork point left out, results stored after the cut brought in as data, and a retry cut just before its answer.
 * Every cut is checked against the strict Anthropic message rules the fake server enforces, as the real API does.
 */
import { describe, expect, it } from 'vitest';
import { forkTranscript } from '../../common/fork';
import { toAnthropic } from '../../activities/model/anthropic';
import { validateMessages } from '../helpers/fake-anthropic';
import type { Message } from '../../workflows/session/contract';

const at = Date.UTC(2026, 10, 29);
const user = (id: string, text: string): Message => ({ role: 'user', id, userId: 'alice', text, at });
const assistant = (id: string, text: string, calls: string[] = [], extra = {}): Message => ({
  role: 'assistant',
  id,
  text,
  toolCalls: calls.map((c) => ({ id: c, name: 'shell_execute', args: { command: `echo ${c}` } })),
  at,
  ...extra,
});
const result = (id: string, call: string): Message => ({
  role: 'tool',
  id,
  toolCallId: call,
  name: 'shell_execute',
  status: 'ok',
  content: `ran ${call}`,
  at,
});

/** Three shell calls in one step, their results, an answer; then a second turn whose call is still open. */
const transcript: Message[] = [
  user('u1', 'run three'),
  assistant('a1', 'running', ['c1', 'c2', 'c3']),
  result('r1', 'c1'),
  result('r2', 'c2'),
  result('r3', 'c3'),
  assistant('a2', 'all three ran', [], {
    model: 'openai:gpt-a',
    feedback: [{ by: 'bob', rating: 'good', at }],
  }),
  user('u2', 'one more'),
  assistant('a3', 'asking', ['c4']),
];

const accepted = (messages: Message[]) =>
  validateMessages(toAnthropic(messages) as Parameters<typeof validateMessages>[0]) === undefined;

describe('forkTranscript', () => {
  it('forks through an answer with the step before it whole, dropping the ratings', () => {
    const cut = forkTranscript(transcript, 'a2', 'through');
    expect(cut.ok && cut.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'r1', 'r2', 'r3', 'a2']);
    expect(cut.ok && cut.messages.at(-1)).not.toHaveProperty('feedback');
    expect(cut.ok && accepted(cut.messages)).toBe(true);
  });

  it('never cuts between a call and its results: forking at the call or one result takes every result', () => {
    for (const id of ['a1', 'r1', 'r2']) {
      const cut = forkTranscript(transcript, id, 'through');
      expect(cut.ok && cut.messages.map((m) => m.id), id).toEqual(['u1', 'a1', 'r1', 'r2', 'r3']);
    }
  });

  it('leaves out a call still open at the fork point, so nothing is left to run or repair', () => {
    const cut = forkTranscript(transcript, 'a3', 'through');
    expect(cut.ok && cut.messages.at(-1)).toMatchObject({ id: 'a3', toolCalls: [] });
    expect(cut.ok && accepted(cut.messages.slice(0, -1))).toBe(true);
  });

  it('brings in a result stored after the cut (an interrupted call answered later)', () => {
    const late: Message[] = [
      user('u1', 'go'),
      assistant('a1', '', ['c1']),
      user('u2', 'hello?'),
      result('r1', 'c1'),
    ];
    const cut = forkTranscript(late, 'u2', 'through');
    expect(cut.ok && cut.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'r1', 'u2']);
    expect(cut.ok && accepted(cut.messages)).toBe(true);
  });

  it('retries an answer: the cut ends at what it answered, and the original answer is kept for comparison', () => {
    const cut = forkTranscript(transcript, 'a2', 'retry');
    expect(cut.ok && cut.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'r1', 'r2', 'r3']);
    expect(cut.ok && cut.original).toEqual({ text: 'all three ran', model: 'openai:gpt-a' });
  });

  it('refuses what cannot be forked, in words', () => {
    expect(forkTranscript(transcript, 'nope', 'through')).toEqual({
      ok: false,
      error: 'no message nope in this conversation',
    });
    expect(forkTranscript(transcript, 'u1', 'retry')).toMatchObject({ ok: false, error: /only an answer/ });
    expect(forkTranscript(transcript, 'a1', 'retry')).toMatchObject({ ok: false, error: /run them again/ });
    const note = [
      assistant('n1', 'a note', [], { synthetic: true }),
      user('u1', 'hi'),
      assistant('a1', 'hello'),
    ];
    expect(forkTranscript(note, 'n1', 'retry')).toMatchObject({ ok: false });
    expect(forkTranscript([assistant('a0', 'hello')], 'a0', 'retry')).toMatchObject({
      ok: false,
      error: /no message of a person/,
    });
  });
});
