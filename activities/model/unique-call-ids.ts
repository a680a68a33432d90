/**
 * Tool call ids as the workflow needs them: unique among the calls the request showed (providers' ids are random,
 * so older ones left out of the window do not collide in practice). Providers make them unique, but a
 * compatible server may repeat one within a message, reuse an earlier one, or send none. The workflow pairs
 * calls, gates and results by id, so a repeated id would wait on one gate twice (and never finish telling it)
 * or be answered by the earlier call's result. Fixed here, in the activity, so the history records the ids the
 * workflow uses and no workflow code changes.
 */
import type { Message, ToolCall } from '../../workflows/session/contract';
import type { ModelReply } from '../types';

export function uniqueCallIds(reply: ModelReply, transcript: readonly Message[]): ModelReply {
  const used = new Set(
    transcript.flatMap((m) => (m.role === 'assistant' ? m.toolCalls.map((c) => c.id) : [])),
  );
  let renamed = false;
  const toolCalls = reply.toolCalls.map((call): ToolCall => {
    const base = typeof call.id === 'string' && call.id ? call.id : 'call';
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}-${n}`;
    used.add(id);
    if (id === call.id) return call;
    renamed = true;
    return { ...call, id };
  });
  return renamed ? { ...reply, toolCalls } : reply;
}
