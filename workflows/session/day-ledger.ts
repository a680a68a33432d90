/**
 * Each person's spend today, as this run knows it: read from (and added to) their ledger workflow through an
 * activity, so a daily limit holds across every conversation of theirs (budget.ts checks it).
 */
import * as wf from '@temporalio/workflow';
import { spendDay, type DaySpend, type ModelUsage } from '../../common/budgets';
import { failureMessage, recordSpend } from './session-activities';
import type { SessionState } from './state';

/** Each person's spend today, as this run last read it from their ledger (a workflow per person). */
export class DayLedger {
  private known: { userId: string; day: string; spend: DaySpend } | undefined;
  /** Usage a failed ledger write could not store, by person: sent with their next record. */
  private readonly unrecorded = new Map<string, ModelUsage>();

  /**
   * The person's spend today from their ledger (adding `usage` or one more allowance first). A ledger that
   * cannot be reached is told once and the daily limit is checked against what was known.
   */
  async refresh(
    state: SessionState,
    userId: string,
    change: { usage?: ModelUsage; raise?: true },
  ): Promise<void> {
    const day = spendDay(Date.now());
    // Usage a failed record could not store goes with this one (it was spent all the same).
    const unrecorded = this.unrecorded.get(userId);
    const usage =
      unrecorded && change.usage ? sumUsage(unrecorded, change.usage) : (unrecorded ?? change.usage);
    try {
      const spend = await recordSpend({
        userId,
        day,
        key: wf.uuid4(),
        ...(usage ? { usage } : {}),
        ...(change.raise ? { raise: true as const } : {}),
      });
      this.unrecorded.delete(userId);
      this.known = { userId, day, spend };
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
      if (usage) this.unrecorded.set(userId, usage);
      state.notify(`I could not update today's spending of @${userId} (${failureMessage(error)}).`);
    }
  }

  /** Today's spend of this requester, as last read (another person's, or yesterday's, is read afresh). */
  today(requesterId: string): DaySpend | undefined {
    const known = this.known;
    return known && known.userId === requesterId && known.day === spendDay(Date.now())
      ? known.spend
      : undefined;
  }
}

function sumUsage(a: ModelUsage, b: ModelUsage): ModelUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: (a.costUsd ?? 0) + (b.costUsd ?? 0),
  };
}
