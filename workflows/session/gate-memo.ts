/**
 * The open gates as the workflow's memo and search attributes show them, so the server answers for them with no
 * worker running: a gate's dialogs (Edit & approve…, Answer…) during a deploy, and "Needs you", which finds a
 * person's gates by the `AgentDeciders` attribute and shows each from its memo entry (gateways/web/inbox.ts).
 * Pure: the session publishes what these functions return whenever its state changes (session-run.ts).
 */
import { z } from 'zod';
import { sharedSchemas } from '../../common/shared-schemas';
import { questionSchema } from '../../common/tools/ask-user';
import type { Gate } from './contract';

export const GATE_MEMO_KEY = 'gates';
/** How many gates are open when more than the memo keeps (absent otherwise): the inbox says some are not shown. */
export const GATES_OPEN_MEMO_KEY = 'gatesOpen';
/** Arguments beyond this (compact JSON) fit no platform's dialog (Discord's text input holds 4,000). */
export const MAX_MEMO_ARGS_CHARS = 4_000;
/** Only the newest open gates are kept, so the memo stays small whatever a turn opens. */
export const MAX_MEMO_GATES = 10;

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

/**
 * An open gate as the memo keeps it: the gate itself without what only its conversation needs (the posts of its
 * prompts, replies typed to it, half-filled answers), and an approval's arguments only when a dialog holds them.
 */
export type MemoGate = Gate & { argsChars?: number };

function memoGate(gate: Gate): MemoGate {
  const { posts: _posts, typed: _typed, ...kept } = gate;
  if (kept.kind === 'question') {
    const { drafts: _drafts, ...question } = kept;
    return question;
  }
  if (kept.kind !== 'approval') return kept;
  const argsChars = JSON.stringify(kept.args).length;
  if (argsChars <= MAX_MEMO_ARGS_CHARS) return { ...kept, argsChars };
  const { args: _args, ...withoutArgs } = kept;
  return { ...withoutArgs, argsChars } as MemoGate;
}

/** The memo entries of the open gates (the newest MAX_MEMO_GATES), by gate id. */
export function gateMemos(gates: readonly Gate[]): Record<string, MemoGate> {
  const memos: Record<string, MemoGate> = {};
  for (const gate of gates.slice(-MAX_MEMO_GATES)) memos[gate.id] = memoGate(gate);
  return memos;
}

/**
 * Every id that may decide one of these open gates, sorted and once each: `AgentDeciders`, which "Needs you"
 * filters by (a person's query names all their ids, so the users table may change without touching workflows).
 * A credential gate is decided by its requester alone; a mission run's gate shown in its owner's conversation
 * (`remote`) is listed from the run, not here.
 */
export function gateDeciders(gates: readonly Gate[]): string[] {
  const ids = new Set<string>();
  for (const gate of gates) {
    if (gate.status !== 'pending' || gate.remote) continue;
    ids.add(gate.requesterId);
    if (gate.kind !== 'credential') for (const id of gate.approvers) ids.add(id);
  }
  return [...ids].sort();
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
