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

export function recordInTrail(entry: AuditEntry | Promise<AuditEntry>): void {
  // Outside any cancellation: a stopped, superseded or cancelled turn still sends the command (a cancelled scope
  // would drop it before it reached the history). Not awaited: once scheduled, the record is in the history; the
  // log line and span the activity makes are copies. An entry still being made (a seal checked first) counts as in
  // flight from now.
  inFlight++;
  const write = (ready: AuditEntry) => wf.CancellationScope.nonCancellable(() => recordAudit(ready));
  // A ready entry is scheduled at once, in the order of the commands around it (recorded histories replay so).
  void (entry instanceof Promise ? entry.then(write) : write(entry))
    .catch(() => undefined)
    .finally(() => inFlight--);
}

/**
 * A grant revoked: in a conversation (`conversation` is its channel) or everywhere (`user`). `sealed`: its person's
 * gateway said so; otherwise someone who reached Temporal did, and the record says it is not verified.
 */
export function grantRevoked(grant: Grant, conversation: string, sealed: boolean) {
  return auditChangeOf(
    {
      type: 'grant',
      workflowId: wf.workflowInfo().workflowId,
      conversation,
      action: 'revoked',
      by: grant.userId,
      grant: { id: grant.id, tool: grant.toolName, pattern: grant.pattern ?? '', scope: grant.scope },
      ...(sealed ? {} : { unverified: true as const }),
    },
    Date.now(),
  );
}
