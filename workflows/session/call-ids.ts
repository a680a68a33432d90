/**
 * Tool call ids as the session needs them: unique in the conversation. The session pairs calls with their gates
 * and results by id, across continue-as-new too, so a reused id would take an earlier gate for a new call (an
 * approval's arguments run again without asking, a question's old answers given to a new one), or skip the call
 * as answered. Providers make ids unique, but a compatible server may repeat one within a reply, number them
 * per reply (`call_0` every time), or send none. Pure: the caller asks the patch only when something changes.
 */
import type { ToolCall } from './contract';

/** The calls with every id unique among `known` and each other (`known` is not changed); `same` if none clash. */
export function distinctCallIds(
  calls: ToolCall[],
  known: ReadonlySet<string>,
): { same: true } | { same: false; calls: ToolCall[] } {
  const used = new Set(known);
  let same = true;
  const renamed = calls.map((call): ToolCall => {
    const base = typeof call.id === 'string' && call.id ? call.id : 'call';
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}-${n}`;
    used.add(id);
    if (id === call.id) return call;
    same = false;
    return { ...call, id };
  });
  return same ? { same } : { same, calls: renamed };
}
