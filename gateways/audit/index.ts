/**
 * The operator's audit export over HTTP: `GET /operator/audit?since=2026-10-01&until=2027-01-01[&person=bob]
 * [&format=jsonl|csv]`, the same records as `agentctl audit export` (infra/audit/export.ts). Operators only
 * (gateways/operator-guard.ts: AUDIT_AUTH_TOKEN, or a sign-in TEMPORAL_UI_USERS names): the records name people and
 * show what they approved.
 */
import type { Hono } from 'hono';
import {
  AuditQueryError,
  auditCsv,
  auditJsonl,
  exportAudit,
  parseAuditTime,
  secretArgsOf,
} from '../../infra/audit/export';
import type { GatewayDeps } from '../platform';
import { operatorGuard } from '../operator-guard';
import { refuseForeignHost } from '../web/auth/request-guard';

export function mountAudit(app: Hono, deps: GatewayDeps): void {
  const refusal = operatorGuard(deps, {
    name: 'the audit export',
    why: 'names people and shows what they approved',
    token: deps.config.audit.authToken,
    tokenSetting: 'AUDIT_AUTH_TOKEN',
    // On loopback in local mode too: the per-install sign-in, as the chat and the Temporal UI ask (a tunnel to a
    // loopback gateway would otherwise hand every decision to whoever finds its address).
    signInEvenLocally: true,
  });
  /** One export at a time per gateway: each reads many histories, beside the webhooks this process serves. */
  let exporting = false;
  app.get('/operator/audit', async (c) => {
    const foreign = refuseForeignHost(c, deps.webAuth);
    if (foreign) return c.json({ error: foreign.error }, foreign.status);
    const refused = refusal(c);
    if (refused) return c.json({ error: refused.error }, refused.status);
    const format = c.req.query('format') ?? 'jsonl';
    if (format !== 'jsonl' && format !== 'csv')
      return c.json({ error: `format is jsonl or csv, not "${format.slice(0, 20)}"` }, 400);
    const since = c.req.query('since');
    if (!since) return c.json({ error: 'since is required: a date (2026-10-01), a date-time or "7d"' }, 400);
    const person = c.req.query('person');
    if (exporting)
      return c.json({ error: 'an audit export is already running here: try again when it ends' }, 429);
    exporting = true;
    try {
      const records = await exportAudit(
        deps.client,
        {
          since: parseAuditTime(since),
          until: c.req.query('until') ? parseAuditTime(c.req.query('until')!) : new Date(),
          ...(person ? { person } : {}),
        },
        {
          users: deps.config.policy.users,
          secretArgs: secretArgsOf(deps.config),
          signal: c.req.raw.signal,
        },
      );
      // Who pulled it, for the operators' own trail.
      const who = deps.webAuth.identify(c);
      deps.log.info('audit exported', {
        records: records.length,
        format,
        by: who.ok ? who.caller.userId : 'AUDIT_AUTH_TOKEN',
        since,
        ...(person ? { person } : {}),
      });
      const name = `audit-${since.replace(/[^\w-]/g, '')}.${format}`;
      return c.body(format === 'csv' ? auditCsv(records) : auditJsonl(records), 200, {
        'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson',
        'content-disposition': `attachment; filename="${name}"`,
        'cache-control': 'no-store',
      });
    } catch (error) {
      if (error instanceof AuditQueryError) return c.json({ error: error.message }, 400);
      deps.log.warn('audit export failed', { error: (error as Error).message });
      return c.json({ error: "the audit export could not read Temporal's histories; try again" }, 503);
    } finally {
      exporting = false;
    }
  });
}
