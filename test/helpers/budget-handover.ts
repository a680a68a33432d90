/**
 * A budget gate whose run is handing over to the next one (continue-as-new waits for the Slack outbox to drain),
 * so that what happens to the gate meanwhile can be tested. Used by the budgets tests and to record the histories
 * that replay it.
 */
import type { ApprovalGate, SessionView } from '../../workflows/session/contract';
import type { FakeSlack } from './fake-slack';
import type { TestSession } from './session';

export const budgetGates = (view: SessionView) =>
  view.gates.filter((g): g is ApprovalGate => g.kind === 'approval' && g.toolName === 'budget');

/**
 * In a Slack thread on a worker with a 1-token conversation limit that continues as new after 20 events: the
 * second message reaches the limit; refusals (four or more), whose ephemeral deliveries Slack holds, outgrow the history,
 * so the run must hand over but cannot until they are delivered. Returns the gate, the run that holds it, and
 * `release` (Slack takes the deliveries; the run hands over), after checking the run is still the first.
 */
export async function budgetGateHandingOver(
  session: TestSession,
  slack: FakeSlack,
): Promise<{ gate: ApprovalGate; firstRun: string; release: () => Promise<void> }> {
  await session.say('first question');
  await session.idle();
  await session.say('second question');
  const [gate] = budgetGates(await session.waitFor((v) => budgetGates(v).length === 1, 'the budget gate'));
  const firstRun = (await session.handle.describe()).runId;
  const unhold = slack.hold('chat.postEphemeral');
  // Refusals until the wait has seen enough events to hand over (10, gate-wait.ts): a loaded machine batches
  // signals into fewer workflow tasks, so a fixed number of them may not be enough.
  const eventsAtGate = (await session.handle.fetchHistory()).events?.length ?? 0;
  for (let i = 0; i < 12; i++) {
    await session.decide({ gateId: gate!.id, choice: 'approve', userId: `mallory${i}` });
    await session.waitFor(
      (v) => v.notices.filter((n) => n.to?.startsWith('mallory')).length === i + 1,
      `refusal ${i + 1}`,
    );
    const events = (await session.handle.fetchHistory()).events?.length ?? 0;
    if (i >= 3 && events - eventsAtGate >= 14) break;
  }
  const release = async () => {
    const sameRun = (await session.handle.describe()).runId === firstRun;
    unhold();
    if (!sameRun) throw new Error('the run handed over before it was let go: the scenario tests nothing');
  };
  return { gate: gate!, firstRun, release };
}
