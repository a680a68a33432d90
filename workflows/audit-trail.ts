/**
 * The workflows' audit trail: each entry (common/audit.ts: a settled gate, or a change a person made without one) is
 * scheduled as the `recordAudit` activity, and its scheduled input in the history is the record that
 * `agentctl audit export` reads back (infra/audit/export.ts). One owner for every workflow that records: sessions
 * and mission runs (their gates, a grant revoked), missions (created, paused, resumed, completed, edited), and a
 * person's directory (a grant revoked everywhere, a credential connected or disconnected).
 *
 * A new command: it ships as a new Worker Deployment version, and workflows move to it at their next continue-as-new
 * (docs/VERSIONING.md), so no history is replayed without it.
 */
import * as wf from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { auditChangeOf, type AuditEntry } from '../common/audit';
import type { Grant } from '../common/grants';

const { recordAudit } = wf.proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});

/** Entries scheduled and not yet written: a run hands over (continues as new) or ends only once they are. */
let inFlight = 0;

export function auditsInFlight(): number {
  return inFlight;
}

/** For a workflow's last step before it continues as new or ends. */
export async function auditsWritten(): Promise<void> {
  await wf.condition(() => inFlight === 0);
}

export function recordInTrail(entry: AuditEntry): void {
  // Outside any cancellation: a stopped, superseded or cancelled turn still sends the command (a cancelled scope
  // would drop it before it reached the history). Not awaited: once scheduled, the record is in the history; the
  // log line and span the activity makes are copies.
  inFlight++;
  void wf.CancellationScope.nonCancellable(() => recordAudit(entry))
    .catch(() => undefined)
    .finally(() => inFlight--);
}

/** A grant its person revoked: in a conversation (`conversation` is its channel) or everywhere (`user`). */
export function grantRevoked(grant: Grant, conversation: string) {
  return auditChangeOf(
    {
      type: 'grant',
      workflowId: wf.workflowInfo().workflowId,
      conversation,
      action: 'revoked',
      by: grant.userId,
      grant: { id: grant.id, tool: grant.toolName, pattern: grant.pattern ?? '', scope: grant.scope },
    },
    Date.now(),
  );
}
