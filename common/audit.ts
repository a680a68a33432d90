/**
 * The audit record of a settled gate: who asked, who decided (as which id, from which channel), what they were shown,
 * the rule, the outcome, when. The session workflow schedules it as the `recordAudit` activity when a gate settles
 * (workflows/session/gate-audit.ts), so its input in the workflow's history is the record, exact across
 * continue-as-new and deploys; `agentctl audit export` and the operator endpoint read it back from histories
 * (infra/audit/export.ts). Pure: the workflow builds it.
 */
import { payloadDigest } from './seal-digest';
import { decidedVia, type DecidedVia } from './chat-ids';

const REASON_CHARS = 2_000;
const iso = (ms: number) => new Date(ms).toISOString();

export interface AuditActor {
  /** The id the decision was made as (a web id, a Slack, Discord or Teams id, `operator:<name>`). */
  id: string;
  /** Their `users` name when the gate knew it (one person, several ids), else the id. */
  person: string;
  via: DecidedVia;
}

export interface AuditRecord {
  /** The record's shape; a reader refuses a newer one it does not know, rather than guess. */
  v: 1;
  type: 'gate';
  /** When it settled (ISO 8601, UTC). */
  at: string;
  openedAt: string;
  waitedMs: number;
  workflowId: string;
  /** The conversation's channel (web, slack, discord, teams, mission). */
  conversation: string;
  gateId: string;
  gate: 'approval' | 'budget' | 'question' | 'credential';
  tool: string;
  requester: AuditActor;
  /** approved, edited, always, denied, answered, connected, expired, stopped, superseded, cancelled, … */
  outcome: string;
  /** Who settled it: a person, or the workflow itself (expiry, a cancelled turn). */
  by: AuditActor;
  /** Every approval counted, in order (a quorum has several). */
  approvals: (AuditActor & { at: string })[];
  reason?: string;
  /** What the deciders were shown: the arguments' digest (SHA-256 of canonical JSON) and the arguments. */
  shown?: { argsDigest: string; args: Record<string, unknown>; subject?: string };
  /** Edit & approve: what ran instead. */
  edited?: { argsDigest: string; args: Record<string, unknown> };
  /** Always allow: the standing grant given. */
  grant?: { id: string; pattern: string; scope: string };
  /** The rule in force: quorum and four-eyes. */
  rule?: { approvalsNeeded: number; selfApprove: boolean };
  /** Question gates: the questions asked, by label (the answers themselves stay in the conversation). */
  questions?: string[];
  /** Sign-in gates: the provider connected. */
  provider?: string;
}

/**
 * A change a person made without a gate, recorded by the workflow it changed: a grant revoked (in its conversation,
 * or everywhere in the person's own directory workflow), a mission created, paused, resumed, completed or edited,
 * a credential connected or disconnected (told to the person's directory workflow by the gateway).
 */
export interface AuditChange {
  v: 1;
  type: 'grant' | 'mission' | 'credential';
  /** When it took effect (ISO 8601, UTC). */
  at: string;
  workflowId: string;
  /** The conversation's channel, `mission`, or `user` (the person's directory workflow). */
  conversation: string;
  /** revoked; created, paused, resumed, completed, updated; connected, disconnected. */
  action: string;
  by: AuditActor;
  reason?: string;
  grant?: { id: string; tool: string; pattern: string; scope: string };
  mission?: { id: string; name: string; changes?: Record<string, unknown> };
  /**
   * Not signed by the person's gateway: sent by someone who reached Temporal directly, naming `by` (applied, as
   * taking a grant away is never a risk, but `by` is only what they claimed).
   */
  unverified?: true;
  /** Credentials: the provider; `how` says oauth (a sign-in) or api_key (a key pasted). */
  provider?: string;
  how?: 'oauth' | 'api_key';
}

/** What the audit trail holds: settled gates and changes made without one. */
export type AuditEntry = AuditRecord | AuditChange;

export const isGateRecord = (entry: AuditEntry): entry is AuditRecord => entry.type === 'gate';

/** A change's record; `person` is the id here: the export names the person from the `users` table. */
export function auditChangeOf(
  change: Omit<AuditChange, 'v' | 'at' | 'by' | 'reason'> & { by: string; reason?: string | undefined },
  now: number,
): AuditChange {
  const { by, reason, ...rest } = change;
  return {
    v: 1,
    at: iso(now),
    ...rest,
    by: { id: by, person: by, via: decidedVia(by) },
    ...(reason ? { reason: reason.slice(0, REASON_CHARS) } : {}),
  };
}

interface SettledGate {
  id: string;
  kind: 'approval' | 'question' | 'credential';
  toolName: string;
  requesterId: string;
  createdAt: number;
  people?: Record<string, string>;
  args?: Record<string, unknown>;
  subject?: string;
  approvalsNeeded?: number;
  selfApprove?: boolean;
  approvals?: { by: string; at: number; via?: DecidedVia }[];
  questions?: { label: string }[];
  provider?: string;
  status: string;
  resolution?: {
    outcome: string;
    by: string;
    at: number;
    via?: DecidedVia;
    reason?: string;
    args?: Record<string, unknown>;
    grant?: { id: string; pattern?: string; scope: string };
  };
}

/** `via`: where the gateway said it was decided; decisions from before that (and an operator's) read it from the id. */
function actor(gate: SettledGate, id: string, via?: DecidedVia): AuditActor {
  const person = (gate.people && Object.hasOwn(gate.people, id) ? gate.people[id] : undefined) ?? id;
  return { id, person, via: via ?? decidedVia(id) };
}

/** The record of a gate that has just settled. `budget`: the gate is a budget's, not a tool call's. */
export function auditRecordOf(
  gate: SettledGate,
  context: { workflowId: string; conversation: string; budget: boolean; now: number },
): AuditRecord {
  const r = gate.resolution;
  const at = r?.at ?? context.now;
  // An expiry or a cancelled turn is settled by the workflow itself (`system`), not by a person.
  const by =
    r?.by && r.by !== 'system'
      ? actor(gate, r.by, r.via)
      : { id: 'workflow', person: 'workflow', via: 'workflow' as const };
  const record: AuditRecord = {
    v: 1,
    type: 'gate',
    at: iso(at),
    openedAt: iso(gate.createdAt),
    waitedMs: Math.max(0, at - gate.createdAt),
    workflowId: context.workflowId,
    conversation: context.conversation,
    gateId: gate.id,
    gate: gate.kind === 'approval' && context.budget ? 'budget' : gate.kind,
    tool: gate.toolName,
    requester: actor(gate, gate.requesterId),
    outcome: r?.outcome ?? gate.status,
    by,
    approvals: (gate.approvals ?? []).map((a) => ({ ...actor(gate, a.by, a.via), at: iso(a.at) })),
  };
  if (r?.reason) record.reason = r.reason.slice(0, REASON_CHARS);
  if (gate.kind === 'approval' && gate.args)
    record.shown = {
      argsDigest: payloadDigest(gate.args),
      args: gate.args,
      ...(gate.subject ? { subject: gate.subject } : {}),
    };
  if (r?.args) record.edited = { argsDigest: payloadDigest(r.args), args: r.args };
  if (r?.grant) record.grant = { id: r.grant.id, pattern: r.grant.pattern ?? '', scope: r.grant.scope };
  if (gate.kind === 'approval')
    record.rule = { approvalsNeeded: gate.approvalsNeeded ?? 1, selfApprove: gate.selfApprove ?? true };
  if (gate.kind === 'question' && gate.questions) record.questions = gate.questions.map((q) => q.label);
  if (gate.kind === 'credential' && gate.provider) record.provider = gate.provider;
  return record;
}

/**
 * The record as an export shows it: the arguments of tools whose policy lists them in `secretArgs` are replaced by
 * "(secret)" (the digest still covers what was shown, so a reviewer can match a known value), `["*"]` all of them.
 */
export function redactAudit<Entry extends AuditEntry>(
  entry: Entry,
  secretArgs: (tool: string) => readonly string[],
): Entry {
  if (!isGateRecord(entry)) {
    // A revoked grant's pattern is made of a tool's arguments: hidden as the tool's arguments are.
    const grant = entry.grant;
    if (grant && secretArgs(grant.tool).length) return { ...entry, grant: { ...grant, pattern: '(secret)' } };
    if (entry.mission) return redactMission(entry, secretArgs) as Entry;
    return entry;
  }
  return redactGate(entry, secretArgs) as Entry;
}

/** The mission tools whose arguments a mission change shows (their `routine_` aliases share the policy's entry). */
const MISSION_TOOLS = [
  'mission_create',
  'mission_update',
  'mission_pause',
  'mission_resume',
  'mission_complete',
];

/** A mission change shows what its tools were given (the goal, a reason): hidden as those tools' arguments are. */
function redactMission(entry: AuditChange, secretArgs: (tool: string) => readonly string[]): AuditChange {
  const secret = new Set(MISSION_TOOLS.flatMap((tool) => [...secretArgs(tool)]));
  if (!secret.size) return entry;
  const hidden = (name: string) => secret.has('*') || secret.has(name);
  const changes = entry.mission!.changes;
  return {
    ...entry,
    ...(entry.reason !== undefined && hidden('reason') ? { reason: '(secret)' } : {}),
    mission: {
      ...entry.mission!,
      ...(changes
        ? {
            changes: Object.fromEntries(
              Object.entries(changes).map(([name, value]) => [name, hidden(name) ? '(secret)' : value]),
            ),
          }
        : {}),
    },
  };
}

function redactGate(record: AuditRecord, secretArgs: (tool: string) => readonly string[]): AuditRecord {
  const secret = secretArgs(record.tool);
  if (!secret.length) return record;
  const hide = (args: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(args).map(([name, value]) => [
        name,
        secret.includes('*') || secret.includes(name) ? '(secret)' : value,
      ]),
    );
  return {
    ...record,
    ...(record.shown
      ? {
          // The subject is made of the arguments (a shell command is its text): left out with them.
          shown: { argsDigest: record.shown.argsDigest, args: hide(record.shown.args) },
        }
      : {}),
    ...(record.edited
      ? { edited: { argsDigest: record.edited.argsDigest, args: hide(record.edited.args) } }
      : {}),
    ...(record.grant ? { grant: { ...record.grant, pattern: '(secret)' } } : {}),
  };
}

/**
 * What the audit log line shows: who, where, the outcome and the arguments' digest, never the arguments, the subject
 * or a reason (they are in the export, for operators; a log pipeline is not the place for what people ran).
 */
export function auditLogLine(record: AuditEntry): Record<string, unknown> {
  if (!isGateRecord(record))
    return {
      at: record.at,
      workflowId: record.workflowId,
      type: record.type,
      action: record.action,
      by: record.by,
      ...(record.grant ? { grantId: record.grant.id, tool: record.grant.tool } : {}),
      ...(record.mission ? { missionId: record.mission.id } : {}),
      ...(record.provider ? { provider: record.provider } : {}),
    };
  return {
    at: record.at,
    workflowId: record.workflowId,
    gateId: record.gateId,
    gate: record.gate,
    tool: record.tool,
    outcome: record.outcome,
    by: record.by,
    requester: record.requester,
    approvals: record.approvals.length,
    waitedMs: record.waitedMs,
    ...(record.shown ? { argsDigest: record.shown.argsDigest } : {}),
  };
}
