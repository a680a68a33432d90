/**
 * The portable transcript format: JSON Lines, one message per line, documented in the README.
 *
 *   {"type":"user","id":"…","user":"alice","text":"…","at":"2026-11-22T10:00:00.000Z"}
 *   {"type":"assistant","id":"…","text":"…","tool_calls":[{"id":"call_1","name":"shell_execute","arguments":{…}}],"at":"…"}
 *   {"type":"tool_result","id":"…","tool_call_id":"call_1","name":"shell_execute","status":"ok","content":"…","at":"…"}
 *
 * Rows the runtime made rather than the model or a tool (a repair's results and recovery marker, notes)
 * carry `"synthetic":true`. A file is checked as a whole: every tool_result answers exactly one earlier call.
 *
 * Pure (zod only): the workflow repairs imported transcripts with the same types.
 */
import { z } from 'zod';
import { sharedSchemas } from './shared-schemas';
import type { Message } from '../workflows/session/contract';

export const transcriptRowSchema = sharedSchemas('transcript-format', () => {
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
    /** A runtime summary of every message up to this id (sent to the model instead of them). */
    summary_through: id.optional(),
    at,
  });
  const toolRow = z.strictObject({
    type: z.literal('tool_result'),
    id,
    tool_call_id: id,
    name: z.string().min(1).max(128),
    status: z.enum(['ok', 'error', 'denied', 'expired', 'superseded', 'failed', 'cancelled']),
    content: z.string().max(100_000),
    synthetic: z.boolean().optional(),
    at,
  });
  return z.discriminatedUnion('type', [userRow, assistantRow, toolRow]);
});
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
        ...(message.summary ? { summary_through: message.summary.throughId } : {}),
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
        ...(message.synthetic ? { synthetic: true } : {}),
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
        ...(row.summary_through ? { summary: { throughId: row.summary_through } } : {}),
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
        ...(row.synthetic ? { synthetic: true } : {}),
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
  const pairing = new CallPairing();
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
    errors.push(...pairing.check(parsed.data, index + 1));
    messages.push(fromRow(parsed.data));
  });
  errors.push(...pairing.unanswered());
  if (messages.length > MAX_IMPORT_ROWS)
    errors.push(`${messages.length} messages: at most ${MAX_IMPORT_ROWS} can be imported`);
  if (!errors.length && messages.length === 0) errors.push('the file holds no messages');
  const byLine = (error: string) => Number(/^line (\d+):/.exec(error)?.[1] ?? Infinity);
  errors.sort((a, b) => byLine(a) - byLine(b));
  return errors.length ? { ok: false, errors: errors.slice(0, 20) } : { ok: true, messages };
}

/**
 * Tool calls and results across the whole file: every result answers exactly one earlier call, and a call
 * id is used once. Calls left without a result are fine (an interruption leaves them; the session repairs
 * them), but a result that answers nothing would make every model request fail.
 */
class CallPairing {
  private readonly calls = new Map<string, number>();
  private readonly results = new Map<string, number>();
  /** Call ids first seen in a result, kept to name the line if the call shows up later. */
  private readonly early = new Map<string, number>();

  check(row: TranscriptRow, line: number): string[] {
    if (row.type === 'assistant')
      return row.tool_calls.flatMap((call) => {
        const seen = this.calls.get(call.id);
        if (seen !== undefined)
          return [`line ${line}: tool call id "${call.id}" is already used on line ${seen}`];
        this.calls.set(call.id, line);
        const before = this.early.get(call.id);
        return before === undefined
          ? []
          : [`line ${before}: the tool_result for "${call.id}" comes before its call on line ${line}`];
      });
    if (row.type !== 'tool_result') return [];
    const answered = this.results.get(row.tool_call_id);
    if (answered !== undefined)
      return [`line ${line}: tool call "${row.tool_call_id}" already has a result on line ${answered}`];
    this.results.set(row.tool_call_id, line);
    if (!this.calls.has(row.tool_call_id)) this.early.set(row.tool_call_id, line);
    return [];
  }

  /** Results whose call never appeared anywhere in the file. */
  unanswered(): string[] {
    return [...this.early]
      .filter(([callId]) => !this.calls.has(callId))
      .map(
        ([callId, line]) => `line ${line}: the tool_result answers no tool call (no call has id "${callId}")`,
      );
  }
}
