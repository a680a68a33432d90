/**
 * Operator commands over the Temporal namespace: list sessions and missions, show one, see what is stuck on
 * whom, and resolve an approval as an operator (recorded with the operator's name). Read-only commands use
 * visibility and queries; `resolve` sends the same `decide` signal a button does.
 */
import { signOperatorClaim } from '../../infra/operator-claim';
import type { Client } from '@temporalio/client';
import { webSessionWorkflowId } from '../../common/ids';
import { missionViewQuery } from '../../workflows/missions/contract';
import { AgentStatus } from '../../common/search-attributes';
import {
  decideSignal,
  pendingGatesQuery,
  stateQuery,
  stopSignal,
  type Gate,
} from '../../workflows/session/contract';
import { approvalProgress, isBudgetGate } from '../../common/gates/words';
import { approverIds } from '../../common/gates/deciders';
import { formatSpend } from '../../common/budgets';

/** Whom a gate waits on: for an approval, the people who may approve it (four-eyes leaves out the requester). */
const waitingOn = (gate: Gate) =>
  gate.kind === 'approval' ? approverIds(gate) : [gate.requesterId, ...gate.approvers];

export interface Row {
  [column: string]: string;
}

/** A plain fixed-width table for terminals. */
export function table(rows: Row[]): string {
  if (!rows.length) return '(none)\n';
  const columns = Object.keys(rows[0]!);
  const width = (c: string) => Math.max(c.length, ...rows.map((r) => (r[c] ?? '').length));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(width(columns[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(columns), line(columns.map((c) => '-'.repeat(width(c)))), ...rows.map((r) => line(columns.map((c) => r[c] ?? '')))].join('\n')}\n`;
}

const attr = (info: { searchAttributes?: Record<string, unknown> }, key: string) => {
  const value = info.searchAttributes?.[key];
  return Array.isArray(value) ? value.join(',') : String(value ?? '');
};

export async function listWorkflows(
  client: Client,
  options: { status?: string; owner?: string; missions?: boolean },
): Promise<string> {
  const filters = [
    options.missions ? `WorkflowType = 'missionWorkflow'` : `WorkflowType = 'sessionWorkflow'`,
    `ExecutionStatus = 'Running'`,
  ];
  if (options.status)
    filters.push(
      options.missions
        ? `AgentMissionStatus = '${escape(options.status)}'`
        : `AgentStatus = '${escape(options.status)}'`,
    );
  if (options.owner) filters.push(`AgentOwner = '${escape(options.owner)}'`);
  const rows: Row[] = [];
  for await (const info of client.workflow.list({ query: filters.join(' AND '), pageSize: 200 })) {
    const memo = (info.memo ?? {}) as { waitingFor?: string | null; reason?: string | null };
    rows.push(
      options.missions
        ? {
            mission: attr(info, 'AgentMissionName'),
            status: attr(info, 'AgentMissionStatus'),
            owner: attr(info, 'AgentOwner'),
            workflow: info.workflowId,
            note: memo.waitingFor ?? memo.reason ?? '',
          }
        : {
            workflow: info.workflowId,
            status: attr(info, 'AgentStatus'),
            channel: attr(info, 'AgentChannel'),
            owner: attr(info, 'AgentOwner'),
            waiting_for: memo.waitingFor ?? '',
          },
    );
  }
  return table(rows);
}

/** A session (by workflow id or web session id) or a mission (by `mission:<id>`): state, open gates, recent transcript. */
export async function showWorkflow(client: Client, target: string, lines = 20): Promise<string> {
  if (target.startsWith('mission:')) {
    const view = await client.workflow.getHandle(target).query(missionViewQuery);
    return `${JSON.stringify(view, null, 2)}\n`;
  }
  const workflowId = target.includes(':') ? target : webSessionWorkflowId(target);
  const view = await client.workflow.getHandle(workflowId).query(stateQuery);
  const open = view.gates.filter((g) => g.status === 'pending');
  // Each line starts with the message's id: what `agentctl fork --at` takes.
  const transcript = view.transcript.slice(-lines).map((m) => {
    if (m.role === 'user') return `${m.id}  @${m.userId}: ${m.text}`;
    if (m.role === 'assistant')
      return `${m.id}  agent${m.model ? ` (${m.model})` : ''}: ${m.text}${m.toolCalls.length ? ` [calls ${m.toolCalls.map((c) => c.name).join(', ')}]` : ''}`;
    return `${m.id}  tool ${m.name} (${m.status}): ${m.content.slice(0, 200)}`;
  });
  const origin = view.forkedFrom;
  return (
    [
      `${workflowId} — ${view.status}, owner @${view.ownerId}, channel ${view.channel}`,
      ...(origin
        ? [
            `forked from ${origin.workflowId} at ${origin.messageId} by @${origin.by}${origin.mode === 'retry' ? ' (retry)' : ''}${origin.model ? ` with ${origin.model}` : ''}`,
          ]
        : []),
      `usage: ${view.usage?.calls ? `${formatSpend(view.usage)} in ${view.usage.calls} model call${view.usage.calls === 1 ? '' : 's'}` : 'none counted'}`,
      ...Object.entries(view.usageByModel ?? {}).map(
        ([model, spend]) =>
          `  ${model}: ${formatSpend(spend)} in ${spend.calls} call${spend.calls === 1 ? '' : 's'}`,
      ),
      `open gates: ${open.length ? '' : 'none'}`,
      ...open.map((g) => `  ${g.id}  ${describeGate(g)}`),
      `transcript (last ${transcript.length}):`,
      ...transcript.map((t) => `  ${t.replace(/\n/g, ' ').slice(0, 300)}`),
    ].join('\n') + '\n'
  );
}

function describeGate(gate: Gate): string {
  const who = waitingOn(gate)
    .map((u) => `@${u}`)
    .join(' or ');
  const since = new Date(gate.createdAt).toISOString().slice(0, 16).replace('T', ' ');
  if (gate.kind === 'credential')
    return `sign-in to ${gate.providerName} by @${gate.requesterId} (since ${since} UTC)`;
  if (gate.kind === 'question')
    return `answer to "${gate.questions.map((q) => q.label).join(', ')}" from ${who} (since ${since} UTC)`;
  if (isBudgetGate(gate)) return `budget: ${gate.subject} from ${who} (since ${since} UTC)`;
  const progress = approvalProgress(gate);
  return `approval of ${gate.toolName} ${gate.subject.slice(0, 80)} from ${who}${progress ? `, ${progress}` : ''} (since ${since} UTC)`;
}

/** Every open gate in the namespace, by the people it waits on. */
export async function stuck(client: Client): Promise<string> {
  const query = `WorkflowType IN ('sessionWorkflow', 'missionRunWorkflow') AND ExecutionStatus = 'Running' AND AgentStatus IN ('waiting_approval', 'waiting_answer', 'waiting_credential')`;
  const rows: Row[] = [];
  for await (const info of client.workflow.list({ query, pageSize: 200 })) {
    const gates = await client.workflow
      .getHandle(info.workflowId)
      .query(pendingGatesQuery)
      .catch(() => undefined);
    if (!gates) {
      rows.push({
        waiting_on: '?',
        workflow: info.workflowId,
        gate: '',
        what: 'no worker answered the query',
        since: '',
      });
      continue;
    }
    for (const gate of gates)
      rows.push({
        waiting_on: waitingOn(gate)
          .map((u) => `@${u}`)
          .join(' '),
        workflow: info.workflowId,
        gate: gate.id,
        what: describeGate(gate).replace(/ \(since .*$/, ''),
        since: new Date(gate.createdAt).toISOString().slice(0, 16).replace('T', ' '),
      });
  }
  rows.sort(
    (a, b) =>
      (a.waiting_on ?? '').localeCompare(b.waiting_on ?? '') || (a.since ?? '').localeCompare(b.since ?? ''),
  );
  return table(rows);
}

export async function resolveGate(
  client: Client,
  options: {
    workflowId: string;
    gateId: string;
    choice: 'approve' | 'deny';
    operator: string;
    /** The operator key (OPERATOR_KEY or DATA_DIR/operator-key): the worker believes only what it signed. */
    operatorKey: string;
    reason?: string;
  },
): Promise<string> {
  const workflowId = options.workflowId.includes(':')
    ? options.workflowId
    : webSessionWorkflowId(options.workflowId);
  const handle = client.workflow.getHandle(workflowId);
  const gates = await handle.query(pendingGatesQuery);
  const gate = gates.find((g) => g.id === options.gateId);
  if (!gate)
    throw new Error(
      `no open gate ${options.gateId} in ${workflowId}; \`agentctl show ${workflowId}\` lists them`,
    );
  if (gate.kind !== 'approval')
    throw new Error(
      `gate ${gate.id} is ${gate.kind === 'question' ? 'a question' : 'a sign-in'}: only approvals can be resolved by an operator`,
    );
  await handle.signal(decideSignal, {
    gateId: gate.id,
    choice: options.choice,
    userId: options.operator,
    operator: true,
    claim: signOperatorClaim(options.operatorKey, {
      kind: 'decide',
      target: gate.id,
      choice: options.choice,
      operator: options.operator,
    }),
    ...(options.reason ? { reason: options.reason } : {}),
  });
  // An operator counts as one distinct approver: under a quorum, the call may still wait for others.
  const needed = gate.approvalsNeeded ?? 1;
  const counted =
    options.choice === 'approve' && needed > 1
      ? ` (one of the ${needed} approvals it needs; \`agentctl show ${workflowId}\` shows how many are in)`
      : '';
  return `${options.choice === 'approve' ? 'approved' : 'denied'} ${gate.toolName} in ${workflowId} as operator:${options.operator}${counted}\n`;
}

const escape = (value: string) => value.replace(/'/g, "\\'");

/** `agentctl stop`: stops the turn running in a conversation, as an operator (recorded as operator:<name>). */
export async function stopTurn(
  client: Client,
  options: { workflowId: string; operator: string; operatorKey: string },
): Promise<string> {
  const workflowId = options.workflowId.includes(':')
    ? options.workflowId
    : webSessionWorkflowId(options.workflowId);
  const handle = client.workflow.getHandle(workflowId);
  const status = (await handle.describe()).typedSearchAttributes.get(AgentStatus);
  if (!status || status === 'idle')
    throw new Error(`nothing is running in ${workflowId} (its status is ${status ?? 'unknown'})`);
  await handle.signal(stopSignal, {
    userId: options.operator,
    operator: true,
    claim: signOperatorClaim(options.operatorKey, {
      kind: 'stop',
      target: workflowId,
      operator: options.operator,
    }),
  });
  return `stop sent to ${workflowId} as operator:${options.operator}; \`agentctl show ${workflowId}\` shows when it took effect\n`;
}
