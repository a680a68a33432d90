/**
 * A click's own verdict among the notices a conversation keeps for its person. The workflow's notices are found by
 * time (`since`, with room for clocks a little apart), so a second click seconds after a first one would read the
 * first one's verdict ("your approval is counted") as its own. The notices about the gate that were there before the
 * decision was sent are noted first (a quick query, skipped when no worker answers: then nothing new is told
 * either), and only a notice told after it is this click's answer.
 */
import { samePerson } from '../common/gates/deciders';
import type { Approval, ClickOutcome, Notice } from '../workflows/session/contract';
import type { Sessions } from './sessions';

/** How far back the workflow's clock may be from the gateway's. */
const CLOCK_ROOM_MS = 2_000;
/** The look before the decision: short, as the person waits for their answer. */
const BEFORE_MS = 500;

const approvalKey = (a: Approval) => `${a.by}@${a.at}`;

export class ClickVerdict {
  private constructor(
    private readonly gateId: string,
    private readonly since: number,
    private readonly toldBefore: ReadonlySet<string>,
    /** Approvals on the gate before the decision was sent (`by@at`): an earlier one is not this click's. */
    private readonly approvedBefore: ReadonlySet<string>,
    private readonly userId: string,
  ) {}

  /** Call before sending the decision. */
  static async before(
    sessions: Pick<Sessions, 'clickOutcome'>,
    workflowId: string,
    click: { gateId: string; userId: string },
  ): Promise<ClickVerdict> {
    const since = Date.now() - CLOCK_ROOM_MS;
    const now = await sessions
      .clickOutcome(workflowId, { ...click, since }, BEFORE_MS)
      .catch(() => undefined);
    const told = (now?.notices ?? []).filter((n) => n.about === click.gateId).map((n) => n.id);
    const approved = now?.gate?.kind === 'approval' ? (now.gate.approvals ?? []).map(approvalKey) : [];
    return new ClickVerdict(click.gateId, since, new Set(told), new Set(approved), click.userId);
  }

  /** The `since` to ask `clickOutcome` with. */
  get from(): number {
    return this.since;
  }

  /** The newest notice about the gate told since the decision was sent: the click's answer, if there is one yet. */
  told(outcome: ClickOutcome | undefined): Notice | undefined {
    return outcome?.notices.filter((n) => n.about === this.gateId && !this.toldBefore.has(n.id)).at(-1);
  }

  /** Whether this click's approval was counted (one of several the gate needs): the person's, and new. */
  counted(outcome: ClickOutcome | undefined): boolean {
    const gate = outcome?.gate;
    return (
      gate?.kind === 'approval' &&
      (gate.approvals ?? []).some(
        (a) => samePerson(gate, a.by, this.userId) && !this.approvedBefore.has(approvalKey(a)),
      )
    );
  }
}
