/**
 * A budget gate decided while its run hands over to the next one (continue-as-new waits for the Slack outbox to
 * drain). Used by the budgets test and to record the histories that replay it.
 */
import type { ApprovalGate, SessionView } from '../../workflows/session/contract';
import type { FakeSlack } from './fake-slack';
import type { TestSession } from './session';

export const budgetGates = (view: SessionView) =>
  view.gates.filter((g): g is ApprovalGate => g.kind === 'approval' && g.toolName === 'budget');

/**
 * In a Slack thread on a worker with a 1-token conversation limit that continues as new after 20 events: the
 * second message reaches the limit; four refusals (their ephemeral deliveries held by Slack) outgrow the history,
 * so the run must hand over but cannot until they are delivered; the requester decides meanwhile. Returns the gate
 * and the run that held it, once the decision is recorded and Slack is let go.
 */
export async function decideBudgetWhileHandingOver(
  session: TestSession,
  slack: FakeSlack,
  choice: 'approve' | 'deny',
): Promise<{ gate: ApprovalGate; firstRun: string }> {
  await session.say('first question');
  await session.idle();
  await session.say('second question');
  const [gate] = budgetGates(await session.waitFor((v) => budgetGates(v).length === 1, 'the budget gate'));
  const firstRun = (await session.handle.describe()).runId;
  const release = slack.hold('chat.postEphemeral');
  try {
    for (let i = 0; i < 4; i++)
      await session.decide({ gateId: gate!.id, choice: 'approve', userId: `mallory${i}` });
    await session.waitFor(
      (v) => v.notices.filter((n) => n.to?.startsWith('mallory')).length === 4,
      'four refusals',
    );
    await session.decide({ gateId: gate!.id, choice });
    await session.waitFor((v) => budgetGates(v)[0]?.status !== 'pending', 'the decision recorded');
    if ((await session.handle.describe()).runId !== firstRun)
      throw new Error('the run handed over before the decision: the scenario tests nothing');
  } finally {
    release();
  }
  return { gate: gate!, firstRun };
}
