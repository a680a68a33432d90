import { describe, expect, it } from 'vitest';
import { streamContextOf } from '../../common/stream-context';
import type { Message } from '../../workflows/session/contract';

const user = (id: string, userId: string): Message => ({ role: 'user', id, userId, text: 'hi', at: 1 });
const calls = (id: string, ...names: string[]): Message => ({
  role: 'assistant',
  id,
  text: '',
  toolCalls: names.map((name, i) => ({ id: `${id}-${i}`, name, args: {} })),
  at: 1,
});
const result = (toolCallId: string, status: 'ok' | 'denied' | 'failed'): Message => ({
  role: 'tool',
  id: `r-${toolCallId}`,
  toolCallId,
  name: 'x',
  status,
  content: '',
  at: 1,
});

describe('what a streamed message shows besides the text', () => {
  it("names the turn's requester and its tool steps, complete or failed with why, and nothing of earlier turns", () => {
    const context = streamContextOf([
      user('m1', 'U_EARLIER'),
      calls('a1', 'old_tool'),
      result('a1-0', 'ok'),
      user('m2', 'U_NOW'),
      calls('a2', 'current_time', 'shell_execute'),
      result('a2-0', 'ok'),
      result('a2-1', 'denied'),
      calls('a3', 'http_request'),
    ]);
    expect(context.requester).toBe('U_NOW');
    expect(context.steps).toEqual([
      { id: 'a2-0', title: 'current_time', status: 'complete' },
      { id: 'a2-1', title: 'shell_execute', status: 'error', details: 'denied' },
      { id: 'a3-0', title: 'http_request', status: 'in_progress' },
    ]);
  });

  it('has no steps for a plain answer, and no requester for a mission run without a message', () => {
    expect(streamContextOf([user('m1', 'U1')])).toEqual({ requester: 'U1', steps: [] });
    expect(streamContextOf([])).toEqual({ steps: [] });
  });
});
