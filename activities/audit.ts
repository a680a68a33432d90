/**
 * The `recordAudit` activity: the workflow schedules it when a gate settles (workflows/session/gate-audit.ts), and its
 * input in the history is the audit record (common/audit.ts) that `agentctl audit export` reads back. The activity
 * itself writes the record as one JSON line (`"message": "audit"`) for a log shipper, with the arguments the policy
 * marks `secretArgs` hidden, and the wait as a `gate_wait` span (genai-spans.ts) when tracing is on.
 */
import { redactAudit, type AuditRecord } from '../common/audit';
import type { AppConfig } from '../infra/config';
import { secretArgsOf } from '../infra/audit/export';
import type { Logger } from '../infra/log';
import { gateWaitSpan } from './genai-spans';

export function auditRecorder(deps: { config: AppConfig; log: Logger }) {
  const secretArgs = secretArgsOf(deps.config);
  return async function recordAudit(record: AuditRecord): Promise<void> {
    deps.log.info('audit', { audit: redactAudit(record, secretArgs) });
    gateWaitSpan(record);
  };
}
