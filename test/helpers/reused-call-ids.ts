/**
 * A model that reuses one tool call id: twice in a reply, then in the next two replies (the third reply's shell
 * call carries the id of an approved one). Used by the models test and to record the history that replays it.
 */
import type { ApprovalGate } from '../../workflows/session/contract';
import { FakeOpenAi } from './fake-openai';
import type { TestSession } from './session';

export function reusedCallIdModel(): FakeOpenAi {
  const shell = (command: string) => ({ id: 'dup', name: 'shell_execute', args: { command } });
  return new FakeOpenAi(
    (_request, index) =>
      [
        { toolCalls: [shell('echo first'), shell('echo second')] },
        { toolCalls: [{ id: 'dup', name: 'current_time', args: {} }] },
        { toolCalls: [shell('echo third')] },
      ][index] ?? { text: 'all done' },
    { latency: [20, 60] },
  );
}

/**
 * Asks, approves the first reply's two calls, then the third reply's call if it is asked about on its own (a
 * session that took the reused id for the approved call asks nothing): returns the approvals asked for.
 */
export async function approveReusedIdCalls(s: TestSession): Promise<ApprovalGate[]> {
  await s.say('run two commands');
  const gates = await s.pendingGate(2);
  for (const gate of gates) await s.decide({ gateId: gate.id, choice: 'approve' });
  const isNew = (g: ApprovalGate) => g.status === 'pending' && !gates.some((earlier) => earlier.id === g.id);
  const view = await s.waitFor(
    (v) =>
      v.gates.some((g) => g.kind === 'approval' && isNew(g)) ||
      (v.status === 'idle' && v.transcript.at(-1)?.role === 'assistant'),
    'a third approval or the answer',
  );
  const third = view.gates.find((g): g is ApprovalGate => g.kind === 'approval' && isNew(g));
  if (!third) return gates;
  await s.decide({ gateId: third.id, choice: 'approve' });
  return [...gates, third];
}
