/**
 * Who may decide a gate, in the words every prompt uses (workflows/session/gates.ts): sent with each gate to the
 * page and the inbox, so the browser shows the workflow's own rule and decides nothing itself.
 */
import type { Gate } from '../../workflows/session/contract';
import { approvalProgress, decidersLine } from '../../common/gates/words';

export function gateRule(gate: Gate): string {
  if (gate.kind === 'approval') return [decidersLine(gate), approvalProgress(gate)].filter(Boolean).join(' ');
  if (gate.kind === 'credential')
    return `Needs @${gate.requesterId} to connect ${gate.providerName}. The tool runs as soon as that is done.`;
  return `Who may answer: ${[gate.requesterId, ...gate.approvers].map((id) => `@${id}`).join(', ')}.`;
}
