/**
 * The portable transcript format: JSON Lines, one message per line, documented in the README.
 *
 *   {"type":"user","id":"…","user":"alice","text":"…","at":"2026-11-22T10:00:00.000Z"}
 *   {"type":"assistant","id":"…","text":"…","tool_calls":[{"id":"call_1","name":"shell_execute","arguments":{…}}],"at":"…"}
 *   {"type":"tool_result","id":"…","tool_call_id":"call_1","name":"shell_execute","status":"ok","content":"…","at":"…"}
 *
 * Pure (zod only): the workflow repairs imported transcripts with the same types.
 */
import { z } from 'zod';
import type { Message } from '../workflows/session/contract';

const at = z.iso.datetime({ offset: true });
const id = z.string().min(1).max(128);

const userRow = z.strictObject({
  type: z.literal('user'),
  id,
  user: z.string().min(1).max(128),
  text: z.string().max(100_000),
  at,
});
const assistantRow = z.strictObject({
  type: z.literal('assistant'),
  id,
  text: z.string().max(100_000),
  tool_calls: z
    .array(z.strictObject({ id, name: z.string().min(1).max(128), arguments: z.unknown() }))
    .default([]),
  synthetic: z.boolean().optional(),
  at,
});
const toolRow = z.strictObject({
  type: z.literal('tool_result'),
  id,
  tool_call_id: id,
  name: z.string().min(1).max(128),
  status: z.enum(['ok', 'error', 'denied', 'expired', 'superseded', 'failed', 'cancelled']),
  content: z.string().max(100_000),
  at,
});
export const transcriptRowSchema = z.discriminatedUnion('type', [userRow, assistantRow, toolRow]);
export type TranscriptRow = z.infer<typeof transcriptRowSchema>;

export const MAX_IMPORT_ROWS = 5_000;

export function toRow(message: Message): TranscriptRow {
  const iso = new Date(message.at).toISOString();
  switch (message.role) {
    case 'user':
      return { type: 'user', id: message.id, user: message.userId, text: message.text, at: iso };
    case 'assistant':
      return {
        type: 'assistant',
        id: message.id,
        text: message.text,
        tool_calls: message.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: call.args })),
        ...(message.synthetic ? { synthetic: true } : {}),
        at: iso,
      };
    case 'tool':
      return {
        type: 'tool_result',
        id: message.id,
        tool_call_id: message.toolCallId,
        name: message.name,
        status: message.status,
        content: message.content,
        at: iso,
      };
  }
}

export function fromRow(row: TranscriptRow): Message {
  const time = Date.parse(row.at);
  switch (row.type) {
    case 'user':
      return { role: 'user', id: row.id, userId: row.user, text: row.text, at: time };
    case 'assistant':
      return {
        role: 'assistant',
        id: row.id,
        text: row.text,
        toolCalls: row.tool_calls.map((call) => ({ id: call.id, name: call.name, args: call.arguments })),
        at: time,
        ...(row.synthetic ? { synthetic: true } : {}),
      };
    case 'tool_result':
      return {
        role: 'tool',
        id: row.id,
        toolCallId: row.tool_call_id,
        name: row.name,
        status: row.status,
        content: row.content,
        at: time,
      };
  }
}

export function toJsonl(messages: readonly Message[]): string {
  return messages.map((message) => JSON.stringify(toRow(message))).join('\n') + (messages.length ? '\n' : '');
}

export type ParsedTranscript = { ok: true; messages: Message[] } | { ok: false; errors: string[] };

/** Parses a JSONL transcript; every bad line is reported with its number, and nothing is half-imported. */
export function fromJsonl(text: string): ParsedTranscript {
  const errors: string[] = [];
  const messages: Message[] = [];
  const lines = text.split(/\r?\n/);
  const ids = new Set<string>();
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      errors.push(`line ${index + 1}: not valid JSON`);
      return;
    }
    const parsed = transcriptRowSchema.safeParse(raw);
    if (!parsed.success) {
      errors.push(
        `line ${index + 1}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'row'}: ${i.message}`).join('; ')}`,
      );
      return;
    }
    if (ids.has(parsed.data.id)) errors.push(`line ${index + 1}: duplicate id "${parsed.data.id}"`);
    ids.add(parsed.data.id);
    messages.push(fromRow(parsed.data));
  });
  if (messages.length > MAX_IMPORT_ROWS)
    errors.push(`${messages.length} messages: at most ${MAX_IMPORT_ROWS} can be imported`);
  if (!errors.length && messages.length === 0) errors.push('the file holds no messages');
  return errors.length ? { ok: false, errors: errors.slice(0, 20) } : { ok: true, messages };
}
