/**
 * "Needs you": every open decision a person may make, across channels (web, Slack, Discord conversations and
 * mission runs), and deciding them from the web, one or many at once.
 *
 * Found through visibility (conversations whose AgentStatus says they wait on a person), read with the
 * conversation's own pending-gates query, and filtered by the workflow's own rule (gates.ts `mayDecide`,
 * `approverIds`): the page shows the rule's text and decides nothing itself. A person is every id the policy's
 * `users` table gives them (their web id, Slack and Discord ids): a decision from the inbox is sent as the id the
 * gate names, so the workflow checks and records it exactly as a click in that channel.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { aliasesOf, personOf, type UsersTable } from '../../common/identities';
import { withinDeadline } from '../../infra/temporal/deadline';
import { gateRule } from './gate-rule';
import type { InboxItem, InboxList, InboxOutcome } from './inbox-types';

export type { InboxItem, InboxList, InboxOutcome } from './inbox-types';
import { missionWorkflowId } from '../../common/ids';
import { AgentMissionName } from '../../common/search-attributes';
import {
  answerSignal,
  decideSignal,
  pendingGatesQuery,
  type AnswerSubmission,
  type Decision,
  type Gate,
  type SessionInput,
} from '../../workflows/session/contract';
import { approverIds, isBudgetGate, mayDecide } from '../../workflows/session/gates';

/** Waiting states that a person can end; visibility finds them without a worker. */
const WAITING = ['waiting_approval', 'waiting_answer', 'waiting_credential'];
/** Conversations read per request: the oldest waits beyond it are still found by `agentctl stuck`. */
const MAX_WORKFLOWS = 200;
const READ_CONCURRENCY = 8;
const QUERY_DEADLINE_MS = 3_000;

/** Ids the inbox decides on: conversations of every channel and mission runs (see common/ids.ts). */
export const INBOX_WORKFLOW_ID =
  /^(?:session:web:[A-Za-z0-9_-]{1,64}|session:slack:[A-Z0-9]{1,40}:[A-Z0-9]{1,40}:\d{1,20}\.\d{1,20}|session:discord:\d{5,25}|mission-run:[0-9a-f-]{36}:\d{1,9})$/;

function describeWhere(workflowId: string, channel: SessionInput['channel'], missionName?: string): string {
  if (channel === 'mission') return `mission ${missionName ?? ''}`.trim();
  if (channel === 'web') return `web conversation ${workflowId.replace(/^session:web:/, '').slice(0, 8)}`;
  return channel === 'slack' ? 'Slack thread' : 'Discord conversation';
}

function asks(gate: Gate): string {
  if (gate.kind === 'question') return gate.questions.map((q) => q.prompt).join(' · ');
  if (gate.kind === 'credential') return `Connect ${gate.providerName} for ${gate.toolName}`;
  if (isBudgetGate(gate)) return 'Continue past the budget?';
  return `Run ${gate.toolName}: ${gate.subject}`;
}

/** The person's ids with those native to the channel first (Slack ids for a Slack thread, Discord's for Discord). */
function nativeFirst(ids: string[], channel: SessionInput['channel']): string[] {
  const native = (id: string) =>
    channel === 'slack'
      ? /^[UW][A-Z0-9]{6,}$/.test(id)
      : channel === 'discord'
        ? /^\d{5,}$/.test(id)
        : !/^[UW][A-Z0-9]{6,}$|^\d{5,}$/.test(id);
  return [...ids.filter(native), ...ids.filter((id) => !native(id))];
}

/** One person, one vote: Approve only when none of their ids asked (under four-eyes), approved or handed over. */
function mayApproveAsPerson(gate: Gate & { kind: 'approval' }, decideAs: string, ids: string[]): boolean {
  if (!approverIds(gate).includes(decideAs)) return false;
  if (gate.selfApprove === false && ids.includes(gate.requesterId)) return false;
  if ((gate.approvals ?? []).some((a) => ids.includes(a.by))) return false;
  return !(gate.delegations ?? []).some((d) => ids.includes(d.by));
}

function channelOf(workflowId: string): SessionInput['channel'] {
  if (workflowId.startsWith('mission-run:')) return 'mission';
  return (workflowId.split(':')[1] as SessionInput['channel'] | undefined) ?? 'web';
}

/**
 * The item for one gate, when this person may decide it; undefined otherwise.
 *
 * The workflow compares ids, and one person may have several (web, Slack, Discord): so the inbox decides as the id
 * native to the gate's channel where that id may decide (the one a click there would carry, so the workflow's own
 * duplicate check sees both), and offers Approve only when no id of the person is the requester under four-eyes,
 * has approved already, or has handed its approval over. One person is one vote, whichever ids the policy names.
 */
export function inboxItem(
  users: UsersTable,
  userId: string,
  workflowId: string,
  gate: Gate,
): InboxItem | undefined {
  if (gate.status !== 'pending' || gate.remote) return undefined; // a mission run's gate is listed from the run
  const channel = channelOf(workflowId);
  const ids = nativeFirst(aliasesOf(userId, users), channel);
  const decideAs =
    gate.kind === 'credential'
      ? ids.find((id) => id === gate.requesterId)
      : ids.find((id) => mayDecide(gate, id));
  if (!decideAs) return undefined;
  const kind = gate.kind === 'approval' && isBudgetGate(gate) ? 'budget' : gate.kind;
  const mayApprove = gate.kind !== 'approval' || mayApproveAsPerson(gate, decideAs, ids);
  return {
    workflowId,
    channel,
    where: describeWhere(workflowId, channel),
    ...(channel === 'web' ? { sessionId: workflowId.replace(/^session:web:/, '') } : {}),
    gateId: gate.id,
    kind,
    asks: asks(gate),
    toolName: gate.toolName,
    ...(gate.kind === 'approval' ? { args: gate.args } : {}),
    ...(gate.kind === 'question' ? { questions: gate.questions } : {}),
    requesterId: personOf(gate.requesterId, users),
    createdAt: gate.createdAt,
    expiresAt: gate.expiresAt,
    rule: gateRule(gate),
    decideAs,
    mayApprove,
    mayEdit:
      kind === 'approval' && mayApprove && gate.kind === 'approval' && (gate.approvalsNeeded ?? 1) <= 1,
  };
}

/** A hand-over's target as a person: refused when any of their ids may decide already, or asked for the call. */
export function handOverRefusal(users: UsersTable, gate: Gate, to: string): string | undefined {
  const theirs = aliasesOf(personOf(to, users), users);
  if (theirs.includes(gate.requesterId)) return `@${to} asked for it`;
  if (theirs.some((id) => mayDecide(gate, id))) return `@${to} may already decide it`;
  return undefined;
}

export class Inbox {
  constructor(
    private readonly client: Client,
    private readonly users: UsersTable,
  ) {}

  private async gatesOf(workflowId: string): Promise<Gate[]> {
    return await withinDeadline(this.client, QUERY_DEADLINE_MS, () =>
      this.client.workflow.getHandle(workflowId).query(pendingGatesQuery),
    );
  }

  /** A run's mission by name (its search attribute; the server answers without a worker). */
  private async missionName(runWorkflowId: string): Promise<string | undefined> {
    const missionId = runWorkflowId.split(':')[1]!;
    try {
      const described = await withinDeadline(this.client, QUERY_DEADLINE_MS, () =>
        this.client.workflow.getHandle(missionWorkflowId(missionId)).describe(),
      );
      return described.typedSearchAttributes.get(AgentMissionName);
    } catch {
      return undefined;
    }
  }

  async list(userId: string): Promise<InboxList> {
    const query = `ExecutionStatus = 'Running' AND AgentStatus IN (${WAITING.map((s) => `'${s}'`).join(', ')})`;
    const found = await withinDeadline(this.client, QUERY_DEADLINE_MS, async () => {
      const out: { workflowId: string; title?: string }[] = [];
      for await (const info of this.client.workflow.list({ query, pageSize: 100 })) {
        if (!INBOX_WORKFLOW_ID.test(info.workflowId)) continue;
        const title = info.memo?.title;
        out.push({ workflowId: info.workflowId, ...(typeof title === 'string' ? { title } : {}) });
        if (out.length >= MAX_WORKFLOWS) break;
      }
      return out;
    });
    const items: InboxItem[] = [];
    let unreadable = 0;
    for (let i = 0; i < found.length; i += READ_CONCURRENCY) {
      await Promise.all(
        found.slice(i, i + READ_CONCURRENCY).map(async ({ workflowId, title }) => {
          let gates: Gate[];
          try {
            gates = await this.gatesOf(workflowId);
          } catch {
            unreadable++;
            return;
          }
          const mine = gates.flatMap((gate) => inboxItem(this.users, userId, workflowId, gate) ?? []);
          if (mine.length && channelOf(workflowId) === 'mission') {
            const name = await this.missionName(workflowId);
            for (const item of mine) item.where = describeWhere(workflowId, 'mission', name);
          }
          if (title) for (const item of mine) item.where = `“${title}”`;
          items.push(...mine);
        }),
      );
    }
    items.sort((a, b) => b.createdAt - a.createdAt);
    return { items, unreadable };
  }

  /**
   * Decides each listed gate as the person: read again (it may have been decided meanwhile), checked against the
   * same rule, then signalled as the id the gate names. Each outcome is reported; one failure stops nothing else.
   */
  async decide(
    userId: string,
    targets: { workflowId: string; gateId: string }[],
    decision: Pick<Decision, 'choice' | 'reason' | 'to' | 'args'>,
  ): Promise<InboxOutcome[]> {
    return await Promise.all(
      targets.map(async ({ workflowId, gateId }): Promise<InboxOutcome> => {
        try {
          const gate = (await this.gatesOf(workflowId)).find((g) => g.id === gateId);
          const item = gate && inboxItem(this.users, userId, workflowId, gate);
          if (!item) return { workflowId, gateId, ok: false, error: 'no longer waiting on you' };
          if (item.kind === 'question')
            return { workflowId, gateId, ok: false, error: 'a question is answered (its form), not decided' };
          if (item.kind === 'credential')
            return { workflowId, gateId, ok: false, error: 'sign in from its conversation' };
          if (decision.choice === 'approve' && !item.mayApprove)
            return { workflowId, gateId, ok: false, error: item.rule };
          if (decision.choice === 'edit' && !item.mayEdit)
            return {
              workflowId,
              gateId,
              ok: false,
              error: item.mayApprove
                ? 'this approval cannot be edited (it needs several approvals)'
                : item.rule,
            };
          if (decision.choice === 'delegate' && !item.mayApprove)
            return { workflowId, gateId, ok: false, error: 'only an approval you hold can be handed over' };
          const refused =
            decision.choice === 'delegate' && decision.to && handOverRefusal(this.users, gate, decision.to);
          if (refused) return { workflowId, gateId, ok: false, error: refused };
          await withinDeadline(this.client, QUERY_DEADLINE_MS, () =>
            this.client.workflow.getHandle(workflowId).signal(decideSignal, {
              gateId,
              choice: decision.choice,
              userId: item.decideAs,
              ...(decision.reason ? { reason: decision.reason } : {}),
              // Only what the choice uses travels into others' histories.
              ...(decision.choice === 'delegate' && decision.to ? { to: decision.to } : {}),
              ...(decision.choice === 'edit' && decision.args ? { args: decision.args } : {}),
            } satisfies Decision),
          );
          return { workflowId, gateId, ok: true };
        } catch (error) {
          return failedOutcome(workflowId, gateId, error);
        }
      }),
    );
  }

  /** Answers a question in the person's inbox, as the id it names; the workflow validates the answers. */
  async answer(
    userId: string,
    { workflowId, gateId }: { workflowId: string; gateId: string },
    answers: AnswerSubmission['answers'],
  ): Promise<InboxOutcome> {
    try {
      const gate = (await this.gatesOf(workflowId)).find((g) => g.id === gateId);
      const item = gate && inboxItem(this.users, userId, workflowId, gate);
      if (!item) return { workflowId, gateId, ok: false, error: 'no longer waiting on you' };
      if (item.kind !== 'question') return { workflowId, gateId, ok: false, error: 'this is not a question' };
      await withinDeadline(this.client, QUERY_DEADLINE_MS, () =>
        this.client.workflow
          .getHandle(workflowId)
          .signal(answerSignal, { gateId, userId: item.decideAs, answers } satisfies AnswerSubmission),
      );
      return { workflowId, gateId, ok: true };
    } catch (error) {
      return failedOutcome(workflowId, gateId, error);
    }
  }
}

function failedOutcome(workflowId: string, gateId: string, error: unknown): InboxOutcome {
  // Nothing about others' workflows is told: a missing one reads like a decided one.
  if (error instanceof WorkflowNotFoundError)
    return { workflowId, gateId, ok: false, error: 'no longer waiting on you' };
  return { workflowId, gateId, ok: false, error: "the agent's server did not answer; try again" };
}
