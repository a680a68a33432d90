/**
 * The `recordAudit` activity: the workflow schedules it when a gate settles (workflows/session/gate-audit.ts), and its
 * input in the history is the audit record (common/audit.ts) that `agentctl audit export` reads back. The activity
 * itself writes a short form of it as one JSON line (`"message": "audit"`: who, where, the outcome, the arguments'
 * digest, never the arguments) for a log shipper, and the wait as a `gate_wait` span (genai-spans.ts).
 */
import { auditLogLine, type AuditRecord } from '../common/audit';
import type { Logger } from '../infra/log';
import { gateWaitSpan } from './genai-spans';

export function auditRecorder(deps: { log: Logger }) {
  return async function recordAudit(record: AuditRecord): Promise<void> {
    deps.log.info('audit', { audit: auditLogLine(record) });
    gateWaitSpan(record);
  };
}
