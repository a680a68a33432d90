/**
 * The audit export: every settled gate of a time window, read back from the workflows' histories (the input of each
 * `recordAudit` activity the session workflow scheduled, common/audit.ts), so it is exact across continue-as-new
 * (every run is its own history, found by visibility) and deploys (the record is data, whatever code wrote it).
 *
 * Bounded by the window, never by "everything": visibility finds the conversations and mission runs that were open at
 * some time in it (running, or closed after its start, and started before its end), a few histories are read at a
 * time, and only records inside the window are kept. A person filter keeps the records they asked, decided or
 * approved in (by any of their ids).
 */
import type { Client } from '@temporalio/client';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import {
  isGateRecord,
  redactAudit,
  type AuditChange,
  type AuditEntry,
  type AuditRecord,
} from '../../common/audit';
import { aliasesOf, personOf, type UsersTable } from '../../common/identities';
import type { AppConfig } from '../config';

export interface AuditQuery {
  since: Date;
  until: Date;
  /** A `users` name or an id: their records only. */
  person?: string;
}

export interface AuditExportOptions {
  users: UsersTable;
  secretArgs: (tool: string) => readonly string[];
  /** Histories read at once. */
  concurrency?: number;
  /** The caller went away: stop reading. */
  signal?: AbortSignal;
}

/** A window at most this long per export: a year of decisions is several exports. */
const MAX_WINDOW_MS = 366 * 24 * 3_600_000;
const RECORD_ACTIVITY = 'recordAudit';
/** The workflows whose histories hold audit records (workflows/audit-trail.ts). */
const TRAIL_WORKFLOWS = ['sessionWorkflow', 'missionRunWorkflow', 'missionWorkflow', 'userDirectoryWorkflow'];
const RECORD_TYPES = new Set<string>(['gate', 'grant', 'mission', 'credential']);
/** Runs one export reads at most: past that, the window is too wide for one request. */
const MAX_RUNS = 20_000;

export class AuditQueryError extends Error {}

/** The policy's `secretArgs` of a tool (MCP tools by their full name). */
export const secretArgsOf =
  (config: AppConfig) =>
  (tool: string): readonly string[] =>
    (Object.hasOwn(config.policy.tools, tool) ? config.policy.tools[tool]?.secretArgs : undefined) ?? [];

/** `--since` / `--until` as an operator types them: an ISO date or date-time, or "7d", "24h" ago. */
export function parseAuditTime(text: string, now = Date.now()): Date {
  const ago = /^(\d{1,4})([dh])$/.exec(text.trim());
  if (ago) return new Date(now - Number(ago[1]) * (ago[2] === 'd' ? 86_400_000 : 3_600_000));
  if (!/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim()))
    throw new AuditQueryError(
      `"${text}" is not a time: use a date (2026-10-01), a date-time (2026-10-01T09:00:00Z) or "7d" / "24h" ago`,
    );
  const date = new Date(/T|\s/.test(text.trim()) ? text.trim() : `${text.trim()}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) throw new AuditQueryError(`"${text}" is not a valid date`);
  return date;
}

export function checkWindow(query: AuditQuery): void {
  if (!(query.since.getTime() < query.until.getTime()))
    throw new AuditQueryError('--since must be before --until');
  if (query.until.getTime() - query.since.getTime() > MAX_WINDOW_MS)
    throw new AuditQueryError('one export covers at most 366 days: export a long period in parts');
}

/** Every record in the window, oldest first. */
export async function exportAudit(
  client: Client,
  query: AuditQuery,
  options: AuditExportOptions,
): Promise<AuditEntry[]> {
  checkWindow(query);
  const since = query.since.toISOString();
  const until = query.until.toISOString();
  // Conversations and mission runs (a run's gates are recorded in the run's own history), missions (their changes)
  // and people's directories (grants revoked everywhere, credentials connected and disconnected).
  const visibility =
    `WorkflowType IN (${TRAIL_WORKFLOWS.map((type) => `'${type}'`).join(', ')}) AND StartTime < '${until}' AND ` +
    `(ExecutionStatus = 'Running' OR CloseTime >= '${since}')`;
  const runs: { workflowId: string; runId: string }[] = [];
  for await (const run of client.workflow.list({ query: visibility })) {
    options.signal?.throwIfAborted();
    runs.push({ workflowId: run.workflowId, runId: run.runId });
    if (runs.length > MAX_RUNS)
      throw new AuditQueryError(
        `more than ${MAX_RUNS} workflow runs (conversations, missions, directories) were open in that window: export it in shorter parts`,
      );
  }

  const theirs = query.person
    ? new Set([query.person, ...aliasesOf(personOf(query.person, options.users), options.users)])
    : undefined;
  const concerns = (record: AuditEntry) =>
    !theirs ||
    (isGateRecord(record) ? [record.requester, record.by, ...record.approvals] : [record.by]).some(
      (a) => theirs.has(a.id) || theirs.has(a.person),
    );
  // A change names the id that made it; the person is the operator's `users` table's, as for gates.
  const named = (record: AuditEntry): AuditEntry =>
    isGateRecord(record)
      ? record
      : { ...record, by: { ...record.by, person: personOf(record.by.id, options.users) } };
  const records: AuditEntry[] = [];
  const concurrency = Math.max(1, options.concurrency ?? 4);
  for (let at = 0; at < runs.length; at += concurrency) {
    options.signal?.throwIfAborted();
    const batch = await Promise.all(runs.slice(at, at + concurrency).map((run) => recordsOf(client, run)));
    for (const record of batch.flat().map(named))
      if (record.at >= since && record.at < until && concerns(record))
        records.push(redactAudit(record, options.secretArgs));
  }
  const key = (r: AuditEntry) => (isGateRecord(r) ? r.gateId : `${r.type}:${r.action}`);
  return records.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : key(a) < key(b) ? -1 : 1));
}

/** The records one run scheduled, decoded as the client decodes (through the payload codec when it is set). */
async function recordsOf(client: Client, run: { workflowId: string; runId: string }): Promise<AuditEntry[]> {
  let history;
  try {
    history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
  } catch (error) {
    // Gone since it was listed (the namespace's retention deleted it): nothing of it can be exported any more.
    if ((error as Error).name === 'WorkflowNotFoundError' || /not found/i.test((error as Error).message))
      return [];
    throw error;
  }
  const records: AuditEntry[] = [];
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== RECORD_ACTIVITY) continue;
    const [record] = (await decodeArrayFromPayloads(
      client.options.loadedDataConverter,
      scheduled.input?.payloads,
    )) as [AuditEntry | undefined];
    if (!record || !RECORD_TYPES.has(record.type)) continue;
    if (record.v !== 1)
      throw new AuditQueryError(
        `${run.workflowId} holds an audit record of version ${String(record.v)}, newer than this agentctl: upgrade it`,
      );
    records.push(record);
  }
  return records;
}

const CSV_COLUMNS = [
  'at',
  'workflowId',
  'conversation',
  'gateId',
  'gate',
  'tool',
  'outcome',
  'by',
  'byId',
  'via',
  'requester',
  'requesterId',
  'approvals',
  'reason',
  'argsDigest',
  'args',
  'editedArgs',
  'grant',
  'rule',
  'openedAt',
  'waitedMs',
  'type',
] as const;

const csvField = (value: string) => {
  // A cell a spreadsheet would run as a formula is quoted as text.
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

/** A change's row: its subject (the grant's tool, the mission's name, the provider) where a gate has its tool. */
function changeRow(r: AuditChange): string[] {
  const subject = r.grant?.tool ?? r.mission?.name ?? r.provider ?? '';
  return [
    r.at,
    r.workflowId,
    r.conversation,
    '',
    '',
    subject,
    r.action,
    r.by.person,
    r.by.id,
    r.by.via,
    '',
    '',
    '',
    r.reason ?? '',
    '',
    r.mission?.changes ? JSON.stringify(r.mission.changes) : (r.how ?? ''),
    '',
    r.grant ? `${r.grant.scope}: ${r.grant.pattern}` : '',
    '',
    '',
    '',
    r.type,
  ];
}

export function auditCsv(records: readonly AuditEntry[]): string {
  const rows = records.map((r) => (isGateRecord(r) ? gateRow(r) : changeRow(r)).map(csvField).join(','));
  return [CSV_COLUMNS.join(','), ...rows].join('\n') + '\n';
}

function gateRow(r: AuditRecord): string[] {
  return [
    r.at,
    r.workflowId,
    r.conversation,
    r.gateId,
    r.gate,
    r.tool,
    r.outcome,
    r.by.person,
    r.by.id,
    r.by.via,
    r.requester.person,
    r.requester.id,
    r.approvals.map((a) => `${a.person} (${a.via}) ${a.at}`).join('; '),
    r.reason ?? '',
    r.shown?.argsDigest ?? '',
    r.shown ? JSON.stringify(r.shown.args) : '',
    r.edited ? JSON.stringify(r.edited.args) : '',
    r.grant ? `${r.grant.scope}: ${r.grant.pattern}` : '',
    r.rule ? `${r.rule.approvalsNeeded} approval(s)${r.rule.selfApprove ? '' : ', four-eyes'}` : '',
    r.openedAt,
    String(r.waitedMs),
    r.type,
  ];
}

export function auditJsonl(records: readonly AuditEntry[]): string {
  return records.map((r) => JSON.stringify(r)).join('\n') + (records.length ? '\n' : '');
}
