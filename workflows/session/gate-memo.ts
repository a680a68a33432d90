/**
 * What a gate's dialogs need, kept in the workflow's memo when the gate opens: the server answers
 * `describe()` with no worker running, so Edit & approve… and Answer… open during a deploy too. Pure.
 */
import { z } from 'zod';
import { sharedSchemas } from '../../common/shared-schemas';
import { questionSchema } from '../../common/tools/ask-user';
import type { Gate } from './contract';

export const GATE_MEMO_KEY = 'gates';
/** Arguments beyond this (compact JSON) fit no platform's dialog (Discord's text input holds 4,000). */
export const MAX_MEMO_ARGS_CHARS = 4_000;
/** Only the newest open gates are kept, so the memo stays small whatever a turn opens. */
const MAX_MEMO_GATES = 10;

export const gateMemoSchema = sharedSchemas('gate-memo', () => ({
  memo: z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('approval'),
      toolName: z.string(),
      /** Absent when the arguments are too large to edit in a dialog; `argsChars` says how large. */
      args: z.record(z.string(), z.unknown()).optional(),
      argsChars: z.number().int(),
    }),
    z.object({ kind: z.literal('question'), questions: z.array(questionSchema).min(1).max(5) }),
  ]),
})).memo;
export type GateMemo = z.infer<typeof gateMemoSchema>;

export function gateMemos(gates: readonly Gate[]): Record<string, GateMemo> {
  const memos: Record<string, GateMemo> = {};
  for (const gate of gates.slice(-MAX_MEMO_GATES)) {
    if (gate.kind === 'approval') {
      const argsChars = JSON.stringify(gate.args).length;
      memos[gate.id] = {
        kind: 'approval',
        toolName: gate.toolName,
        ...(argsChars <= MAX_MEMO_ARGS_CHARS ? { args: gate.args } : {}),
        argsChars,
      };
    } else if (gate.kind === 'question') memos[gate.id] = { kind: 'question', questions: gate.questions };
  }
  return memos;
}

/** Reads one gate's entry from a described workflow's memo; undefined when absent or malformed. */
export function readGateMemo(
  memo: Record<string, unknown> | undefined,
  gateId: string,
): GateMemo | undefined {
  const entry = (memo?.[GATE_MEMO_KEY] as Record<string, unknown> | undefined)?.[gateId];
  const parsed = gateMemoSchema.safeParse(entry);
  return parsed.success ? parsed.data : undefined;
}
