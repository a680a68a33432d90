/**
 * A waiting workflow's open gates as its memo keeps them (workflows/session/gate-memo.ts): what "Needs you" shows,
 * read from visibility or `describe()`, which the server answers with no worker. Parsed, since a workflow of
 * another version may keep another shape: an entry that does not parse is left out and counted.
 */
import { z } from 'zod';
import {
  GATE_MEMO_KEY,
  GATES_OPEN_MEMO_KEY,
  MAX_MEMO_GATES,
  type MemoGate,
} from '../../workflows/session/gate-memo';

const memoGateSchema = z.looseObject({
  id: z.string().min(1).max(64),
  kind: z.enum(['approval', 'question', 'credential']),
  toolCallId: z.string(),
  requesterId: z.string(),
  approvers: z.array(z.string()),
  createdAt: z.number(),
  expiresAt: z.number().nullable(),
  status: z.literal('pending'),
  toolName: z.string(),
  argsChars: z.number().int().optional(),
});

export interface MemoGates {
  /** The memo keeps open gates in this shape (false: none kept yet, or a workflow of an older version). */
  current: boolean;
  gates: MemoGate[];
  /** Open gates the memo does not keep (more were open than it holds). */
  notKept: number;
  /** Entries of another shape (a workflow of an older version): left out. */
  malformed: number;
  /** A mission run's mission, by name. */
  missionName?: string;
}

export function readMemoGates(memo: Record<string, unknown> | undefined): MemoGates {
  const entries = memo?.[GATE_MEMO_KEY];
  const gates: MemoGate[] = [];
  let malformed = 0;
  if (entries && typeof entries === 'object')
    for (const entry of Object.values(entries)) {
      const parsed = memoGateSchema.safeParse(entry);
      if (parsed.success) gates.push(parsed.data as unknown as MemoGate);
      else malformed++;
    }
  const open = memo?.[GATES_OPEN_MEMO_KEY];
  const missionName = memo?.missionName;
  return {
    current: !!entries && typeof entries === 'object' && !malformed,
    gates,
    notKept: typeof open === 'number' && open > MAX_MEMO_GATES ? open - MAX_MEMO_GATES : 0,
    malformed,
    ...(typeof missionName === 'string' ? { missionName } : {}),
  };
}
