import { describe, expect, it } from 'vitest';
import { fromJsonl, toJsonl } from '../../common/transcript-format';
import type { Message } from '../../workflows/session/contract';
import { INTERRUPTED_RESULT, RECOVERY_MARKER, repairTranscript } from '../../workflows/session/repair';

const at = Date.UTC(2026, 10, 22);
const user = (id: string, text = 'hi'): Message => ({ role: 'user', id, userId: 'alice', text, at });
const assistant = (id: string, calls: string[] = [], text = ''): Message => ({
  role: 'assistant',
  id,
  text,
  toolCalls: calls.map((c) => ({ id: c, name: 'shell_execute', args: { command: 'ls' } })),
  at,
});
const result = (id: string, call: string): Message => ({
  role: 'tool',
  id,
  toolCallId: call,
  name: 'shell_execute',
  status: 'ok',
  content: 'done',
  at,
});

function repair(transcript: Message[], live: string[] = []) {
  let n = 0;
  return repairTranscript(transcript, at + 1, () => `r${++n}`, { liveCallIds: new Set(live) });
}

describe('transcript repair', () => {
  it('leaves a user turn that is still being answered (carried at a budget gate) without a recovery marker', () => {
    const transcript = [user('u1'), assistant('a1', [], 'hello'), user('u2')];
    expect(repair(transcript).report.recoveredUserTurn).toBe(true);
    const live = repairTranscript(transcript, at + 1, () => 'r1', { userTurnIsLive: true });
    expect(live).toEqual({ transcript, report: { interruptedCalls: [], recoveredUserTurn: false } });
  });

  it('gives every missing tail tool call one synthetic error result', () => {
    const { transcript, report } = repair([user('u1'), assistant('a1', ['c1', 'c2'])]);
    expect(report).toEqual({ interruptedCalls: ['c1', 'c2'], recoveredUserTurn: false });
    expect(transcript.slice(2)).toEqual([
      {
        role: 'tool',
        id: 'r1',
        toolCallId: 'c1',
        name: 'shell_execute',
        status: 'error',
        content: INTERRUPTED_RESULT,
        at: at + 1,
        synthetic: true,
      },
      {
        role: 'tool',
        id: 'r2',
        toolCallId: 'c2',
        name: 'shell_execute',
        status: 'error',
        content: INTERRUPTED_RESULT,
        at: at + 1,
        synthetic: true,
      },
    ]);
  });

  it('completes partial tail results with only the missing ones', () => {
    const { transcript, report } = repair([
      user('u1'),
      assistant('a1', ['c1', 'c2', 'c3']),
      result('t2', 'c2'),
    ]);
    expect(report.interruptedCalls).toEqual(['c1', 'c3']);
    expect(
      transcript.filter((m) => m.role === 'tool').map((m) => (m.role === 'tool' ? m.toolCallId : '')),
    ).toEqual(['c2', 'c1', 'c3']);
  });

  it('adds one recovery marker after an orphan user turn', () => {
    const { transcript, report } = repair([
      user('u1'),
      assistant('a1', [], 'hello'),
      user('u2', 'and then?'),
    ]);
    expect(report).toEqual({ interruptedCalls: [], recoveredUserTurn: true });
    expect(transcript.at(-1)).toEqual({
      role: 'assistant',
      id: 'r1',
      text: RECOVERY_MARKER,
      toolCalls: [],
      at: at + 1,
      synthetic: true,
    });
  });

  it('gives an interrupted turn both its missing results and one recovery marker', () => {
    const damaged = [
      user('u1'),
      assistant('a1', ['c1', 'c2']),
      result('t1', 'c1'),
      user('u2', 'still there?'),
    ];
    const { transcript, report } = repair(damaged);
    expect(report).toEqual({ interruptedCalls: ['c2'], recoveredUserTurn: true });
    expect(transcript.slice(0, damaged.length)).toEqual(damaged);
    expect(transcript.slice(damaged.length)).toEqual([
      expect.objectContaining({ role: 'tool', toolCallId: 'c2', status: 'error', synthetic: true }),
      expect.objectContaining({ role: 'assistant', text: RECOVERY_MARKER, synthetic: true }),
    ]);
    expect(repair(transcript)).toEqual({
      transcript,
      report: { interruptedCalls: [], recoveredUserTurn: false },
    });
  });

  it('marks a user turn whose only followers are tool results', () => {
    const damaged = [user('u1'), assistant('a1', ['c1']), user('u2'), result('t1', 'c1')];
    expect(repair(damaged).report.recoveredUserTurn).toBe(true);
  });

  it('is a no-op on a healthy transcript and on its own output, and never changes earlier rows', () => {
    const healthy = [user('u1'), assistant('a1', ['c1']), result('t1', 'c1'), assistant('a2', [], 'done')];
    expect(repair(healthy)).toEqual({
      transcript: healthy,
      report: { interruptedCalls: [], recoveredUserTurn: false },
    });
    const damaged = [user('u1'), assistant('a1', ['c1']), user('u2')];
    const once = repair(damaged).transcript;
    expect(once.slice(0, damaged.length)).toEqual(damaged);
    expect(repair(once).transcript).toEqual(once);
  });

  it('leaves calls that are still waiting on an open gate alone', () => {
    const { report } = repair([user('u1'), assistant('a1', ['c1', 'c2'])], ['c1']);
    expect(report.interruptedCalls).toEqual(['c2']);
  });
});

describe('transcript format (JSON Lines)', () => {
  it('round-trips every kind of message', () => {
    const messages: Message[] = [
      user('u1'),
      assistant('a1', ['c1'], 'running'),
      result('t1', 'c1'),
      { ...assistant('a2', [], 'note'), synthetic: true } as Message,
    ];
    const text = toJsonl(messages);
    expect(text.split('\n')[0]).toBe(
      '{"type":"user","id":"u1","user":"alice","text":"hi","at":"2026-11-22T00:00:00.000Z"}',
    );
    expect(fromJsonl(text)).toEqual({ ok: true, messages });
  });

  it('reports every bad line by number and imports nothing', () => {
    const text = [
      '{"type":"user","id":"u1","user":"alice","text":"hi","at":"2026-11-22T00:00:00Z"}',
      'not json',
      '{"type":"robot","id":"x"}',
      '{"type":"user","id":"u1","user":"a","text":"x","at":"yesterday"}',
    ].join('\n');
    const parsed = fromJsonl(text);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.errors).toEqual([
      'line 2: not valid JSON',
      expect.stringMatching(/^line 3: /),
      expect.stringMatching(/^line 4: at: /),
    ]);
    expect(fromJsonl('\n\n')).toEqual({ ok: false, errors: ['the file holds no messages'] });
  });

  it('round-trips the repair of an interrupted turn byte for byte, synthetic rows marked', () => {
    const damaged = [user('u1'), assistant('a1', ['c1', 'c2']), result('t1', 'c1'), user('u2')];
    const exported = toJsonl(repair(damaged).transcript);
    expect(exported.split('\n')[4]).toContain('"status":"error"');
    expect(exported.split('\n')[4]).toContain('"synthetic":true');
    const parsed = fromJsonl(exported);
    expect(parsed.ok).toBe(true);
    const again = parsed.ok ? repair(parsed.messages) : undefined;
    expect(again?.report).toEqual({ interruptedCalls: [], recoveredUserTurn: false });
    expect(toJsonl(again!.transcript)).toBe(exported);
  });

  it('refuses results that answer nothing, come twice or before their call, and reused ids, by line', () => {
    const row = (value: object) => JSON.stringify({ at: '2026-11-22T00:00:00.000Z', ...value });
    const call = (id: string, calls: string[]) =>
      row({
        type: 'assistant',
        id,
        text: '',
        tool_calls: calls.map((c) => ({ id: c, name: 'shell_execute', arguments: {} })),
      });
    const res = (id: string, callId: string) =>
      row({
        type: 'tool_result',
        id,
        tool_call_id: callId,
        name: 'shell_execute',
        status: 'ok',
        content: 'x',
      });
    const text = [
      row({ type: 'user', id: 'u1', user: 'alice', text: 'hi' }),
      res('t0', 'c2'),
      call('a1', ['c1', 'c2']),
      res('t1', 'c1'),
      res('t2', 'c1'),
      res('t3', 'nope'),
      call('a2', ['c1']),
      res('t3', 'c2'),
    ].join('\n');
    const parsed = fromJsonl(text);
    expect(!parsed.ok && parsed.errors).toEqual([
      'line 2: the tool_result for "c2" comes before its call on line 3',
      'line 5: tool call "c1" already has a result on line 4',
      'line 6: the tool_result answers no tool call (no call has id "nope")',
      'line 7: tool call id "c1" is already used on line 3',
      'line 8: duplicate id "t3"',
      'line 8: tool call "c2" already has a result on line 2',
    ]);
  });
});
