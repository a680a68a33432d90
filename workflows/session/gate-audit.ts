/**
 * The audit trail of a conversation's gates: when a gate settles, its record (common/audit.ts: who asked, who
 * decided as which id and from where, what they were shown, the rule, the outcome) is scheduled as the `recordAudit`
 * activity. The scheduled input is the record: it stays in this workflow's history whatever becomes of the activity,
 * and `agentctl audit export` reads it from there. A new command: it ships as a new Worker Deployment version, and
 * conversations move to it at their next continue-as-new (docs/VERSIONING.md), so no history is replayed without it.
 */
import * as wf from '@temporalio/workflow';
import { auditRecordOf } from '../../common/audit';
import { isBudgetGate } from '../../common/gates/words';
import type { Gate } from './contract';
import { recordInTrail } from '../audit-trail';

export function auditSettled(gate: Gate, conversation: string): void {
  if (!wf.inWorkflowContext() || gate.remote) return; // a mission run's gate is recorded by the run
  const record = auditRecordOf(gate, {
    workflowId: wf.workflowInfo().workflowId,
    conversation,
    budget: gate.kind === 'approval' && isBudgetGate(gate),
    now: Date.now(),
  });
  recordInTrail(record);
}
