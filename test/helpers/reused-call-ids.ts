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

/** Asks, approves the first reply's two calls, then the third reply's call (asked about on its own). */
export async function approveReusedIdCalls(s: TestSession): Promise<ApprovalGate[]> {
  await s.say('run two commands');
  const gates = await s.pendingGate(2);
  for (const gate of gates) await s.decide({ gateId: gate.id, choice: 'approve' });
  const [third] = (await s.pendingGate()).filter((g) => !gates.some((earlier) => earlier.id === g.id));
  await s.decide({ gateId: third!.id, choice: 'approve' });
  return [...gates, third!];
}
