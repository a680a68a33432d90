/**
 * The `recordAudit` activity: a workflow schedules it when a gate settles or a person changes something without one
 * (workflows/audit-trail.ts), and its input in the history is the audit record (common/audit.ts) that
 * `agentctl audit export` reads back. The activity itself writes a short form of it as one JSON line
 * (`"message": "audit"`: who, where, the outcome, the arguments' digest, never the arguments) for a log shipper, and
 * a gate's wait as a `gate_wait` span (genai-spans.ts).
 */
import { auditLogLine, isGateRecord, type AuditEntry } from '../common/audit';
import type { Logger } from '../infra/log';
import { gateWaitSpan } from './genai-spans';

export function auditRecorder(deps: { log: Logger }) {
  return async function recordAudit(record: AuditEntry): Promise<void> {
    deps.log.info('audit', { audit: auditLogLine(record) });
    if (isGateRecord(record)) gateWaitSpan(record);
  };
}
