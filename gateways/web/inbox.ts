/**
 * "Needs you": every open decision a person may make, across channels (web, Slack, Discord conversations and
 * mission runs), and deciding them from the web, one or many at once.
 *
 * Found through visibility by the person's own ids (the `AgentDeciders` attribute every waiting workflow keeps),
 * shown from each workflow's memo (its open gates), a page at a time with an exact count: no worker is asked,
 * and the cost is the person's page, not what the organization has waiting (docs/SCALING.md). Each gate is
 * filtered by the workflow's own rule (gates.ts `mayDecide`, `approverIds`): the page shows the rule's text and
 * decides nothing itself. A person is every id the policy's
 * `users` table gives them (their web id, Slack and Discord ids): a decision from the inbox is sent as the id the
 * gate names, so the workflow checks and records it exactly as a click in that channel.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { aliasesOf, personOf, type UsersTable } from '../../common/identities';
import { withinDeadline } from '../../infra/temporal/deadline';
import { gateRule } from './gate-rule';
import type { InboxItem, InboxList, InboxOutcome } from './inbox-types';

export type { InboxItem, InboxList, InboxOutcome } from './inbox-types';
import type { Logger } from '../../infra/log';
import { decodeMemo } from '../../infra/temporal/memo';
import { readMemoGates } from './inbox-memo';
import {
  answerSignal,
  decideSignal,
  pendingGatesQuery,
  type AnswerSubmission,
  type Decision,
  type Gate,
  type SessionInput,
} from '../../workflows/session/contract';
import { isBudgetGate } from '../../common/gates/words';
import { teamsUserId } from '../../common/chat-ids';
import { countInboxRead } from '../metrics';
import { mayApprove, mayDecide } from '../../common/gates/deciders';
import { gateMemos, type MemoGate } from '../../workflows/session/gate-memo';

/**
 * Ids the inbox decides on: conversations of every channel and mission runs (see common/ids.ts; a Teams conversation
 * is its service URL and conversation id, each base64url, platforms/teams/ids.ts).
 */
export const INBOX_WORKFLOW_ID =
  /^(?:session:web:[A-Za-z0-9_-]{1,64}|session:slack:[A-Z0-9]{1,40}:[A-Z0-9]{1,40}:\d{1,20}\.\d{1,20}|session:discord:\d{5,25}|session:teams:[A-Za-z0-9_-]{1,400}\.[A-Za-z0-9_-]{1,540}|mission-run:[0-9a-f-]{36}:\d{1,9})$/;

const CHANNEL_PLACE: Record<string, string> = {
  slack: 'Slack thread',
  discord: 'Discord conversation',
  teams: 'Teams conversation',
};

function describeWhere(workflowId: string, channel: SessionInput['channel'], missionName?: string): string {
  if (channel === 'mission') return `mission ${missionName ?? ''}`.trim();
  if (channel === 'web') return `web conversation ${workflowId.replace(/^session:web:/, '').slice(0, 8)}`;
  return CHANNEL_PLACE[channel] ?? `${channel} conversation`;
}

function asks(gate: Gate): string {
  if (gate.kind === 'question') return gate.questions.map((q) => q.prompt).join(' · ');
  if (gate.kind === 'credential') return `Connect ${gate.providerName} for ${gate.toolName}`;
  if (isBudgetGate(gate)) return 'Continue past the budget?';
  return `Run ${gate.toolName}: ${gate.subject}`;
}

/**
 * The person's ids with those native to the channel first: their Slack ids (from the users table) for a Slack thread,
 * Discord's for Discord, Teams' for Teams, their web id elsewhere. A click in that channel would carry that id.
 */
function nativeFirst(userId: string, users: UsersTable, channel: SessionInput['channel']): string[] {
  const ids = aliasesOf(userId, users);
  const entry = Object.hasOwn(users, userId) ? users[userId] : undefined;
  const native = new Set(
    channel === 'slack'
      ? (entry?.slack ?? [])
      : channel === 'discord'
        ? (entry?.discord ?? [])
        : channel === 'teams'
          ? (entry?.teams ?? []).map(teamsUserId)
          : [userId],
  );
  return [...ids.filter((id) => native.has(id)), ...ids.filter((id) => !native.has(id))];
}

/** One person, one vote: Approve only when none of their ids asked (under four-eyes), approved or handed over. */
function mayApproveAsPerson(gate: Gate & { kind: 'approval' }, decideAs: string, ids: string[]): boolean {
  if (!mayApprove(gate, decideAs)) return false;
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
  const ids = nativeFirst(userId, users, channel);
  const decideAs =
    gate.kind === 'credential'
      ? ids.find((id) => id === gate.requesterId)
      : ids.find((id) => mayDecide(gate, id));
  if (!decideAs) return undefined;
  const kind = gate.kind === 'approval' && isBudgetGate(gate) ? 'budget' : gate.kind;
  // Arguments too large for the memo are not shown here, so nobody approves them unseen from the inbox.
  const unseen =
    gate.kind === 'approval' && gate.args === undefined ? (gate as MemoGate).argsChars : undefined;
  const mayApprove =
    gate.kind !== 'approval' || (unseen === undefined && mayApproveAsPerson(gate, decideAs, ids));
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
    rule:
      unseen === undefined
        ? gateRule(gate)
        : `${gateRule(gate)} Its arguments (${unseen.toLocaleString('en')} characters) are too large to show here: approve it in its conversation.`,
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

/** Conversations per page of "Needs you" (a visibility page; each holds one gate or a few). */
export const INBOX_PAGE_SIZE = 50;
const QUERY_DEADLINE_MS = 3_000;

/** The ids a visibility query may name: every id our sign-in modes, Slack and Discord make (never a quote). */
const QUERYABLE_ID = /^[A-Za-z0-9._@:~-]{1,255}$/;

/** The page after this one, opaque to the browser: Temporal's own page token. */
/**
 * A cursor is the server's page token and a seal over it and the person it was given to (HMAC with the gateway's
 * signing key): a forged, damaged or someone else's cursor is refused as such before any server is asked.
 */
const cursorSeal = (key: Buffer, userId: string, token: Uint8Array): string =>
  createHmac('sha256', key).update(`inbox-cursor.${userId}.`).update(token).digest('base64url').slice(0, 22);

function encodeCursor(key: Buffer, userId: string, token: Uint8Array): string {
  return `${Buffer.from(token).toString('base64url')}.${cursorSeal(key, userId, token)}`;
}

function decodeCursor(key: Buffer, userId: string, cursor: string): Uint8Array | undefined {
  const match = /^([A-Za-z0-9_-]{1,4000})\.([A-Za-z0-9_-]{22})$/.exec(cursor);
  if (!match) return undefined;
  const token = Buffer.from(match[1]!, 'base64url');
  const expected = Buffer.from(cursorSeal(key, userId, token));
  const given = Buffer.from(match[2]!);
  return expected.length === given.length && timingSafeEqual(expected, given) ? token : undefined;
}

export class InboxCursorError extends Error {}
/** The namespace lacks the `AgentDeciders` attribute (set up by hand, e.g. Temporal Cloud): said with the fix. */
export class InboxNotSetUpError extends Error {}

const INVALID_ARGUMENT = 3;

/** A visibility refusal said as what to do: the attribute to register, or a page token the server no longer takes. */
function refusal(error: unknown, cursor: string | undefined): unknown {
  const code = (error as { code?: unknown }).code;
  if (code !== INVALID_ARGUMENT) return error;
  const message = (error as Error).message;
  if (/AgentDeciders/.test(message))
    return new InboxNotSetUpError(
      `"Needs you" needs the search attribute AgentDeciders (KeywordList), which this namespace lacks: the worker registers it at start where it may, or run \`temporal operator search-attribute create --name AgentDeciders --type KeywordList\` (${message})`,
    );
  return cursor ? new InboxCursorError('this page is no longer available') : error;
}

export class Inbox {
  constructor(
    private readonly client: Client,
    private readonly users: UsersTable,
    /** The gateway's signing key: seals the cursors it gives. */
    private readonly cursorKey: () => Buffer,
    private readonly log?: Logger,
  ) {}

  /** Visibility's filter for "waiting on one of these ids" (AgentDeciders, kept by every waiting workflow). */
  private waitingOn(userId: string): string | undefined {
    const ids = aliasesOf(userId, this.users).filter((id) => QUERYABLE_ID.test(id));
    if (!ids.length) return undefined;
    return `ExecutionStatus = 'Running' AND AgentDeciders IN (${ids.map((id) => `'${id}'`).join(', ')})`;
  }

  /**
   * One page of the person's decisions, newest waiting conversation first: one visibility query filtered by their
   * ids (and an exact count when the list is cut), each gate shown from its workflow's memo. No worker is asked, so the cost is the
   * person's own page whatever the organization has waiting.
   */
  async list(userId: string, cursor?: string): Promise<InboxList> {
    try {
      const list = await this.listWaiting(userId, cursor);
      countInboxRead(true);
      return list;
    } catch (error) {
      countInboxRead(false);
      throw error;
    }
  }

  private async listWaiting(userId: string, cursor?: string): Promise<InboxList> {
    const query = this.waitingOn(userId);
    if (!query) return { items: [], total: 0, notShown: 0, unreadable: 0 };
    const token = cursor === undefined ? undefined : decodeCursor(this.cursorKey(), userId, cursor);
    if (cursor !== undefined && !token)
      throw new InboxCursorError('not a cursor this inbox gave you: start again from the first page');
    const { namespace } = this.client.options;
    // A page that holds them all counts them itself; only a cut list asks for the exact count (each visibility call
    // counts against the namespace's visibility rate limit, docs/SCALING.md).
    const { page, total } = await withinDeadline(this.client, QUERY_DEADLINE_MS, async () => {
      const page = await this.client.workflowService.listWorkflowExecutions({
        namespace,
        query,
        pageSize: INBOX_PAGE_SIZE,
        ...(token ? { nextPageToken: token } : {}),
      });
      const cut = !!page.nextPageToken?.length || !!token;
      const total = cut
        ? Number((await this.client.workflowService.countWorkflowExecutions({ namespace, query })).count ?? 0)
        : (page.executions ?? []).length;
      return { page, total };
    }).catch((error: unknown) => {
      throw refusal(error, cursor);
    });
    const items: InboxItem[] = [];
    let notShown = 0;
    let unreadable = 0;
    for (const execution of page.executions ?? []) {
      const workflowId = execution.execution?.workflowId ?? '';
      if (!INBOX_WORKFLOW_ID.test(workflowId)) continue;
      // A memo this gateway cannot decode (a payload key it does not have) is one unreadable conversation, not a
      // failed page.
      const memo = await decodeMemo(this.client, execution.memo?.fields).catch(() => undefined);
      if (!memo) {
        unreadable++;
        continue;
      }
      const kept = readMemoGates(memo);
      notShown += kept.notKept;
      if (kept.malformed && !kept.gates.length) unreadable++;
      const title = memo?.title;
      for (const gate of kept.gates) {
        const item = inboxItem(this.users, userId, workflowId, gate);
        if (!item) continue;
        if (item.channel === 'mission') item.where = describeWhere(workflowId, 'mission', kept.missionName);
        if (typeof title === 'string') item.where = `“${title}”`;
        items.push(item);
      }
    }
    const next = page.nextPageToken?.length
      ? encodeCursor(this.cursorKey(), userId, page.nextPageToken)
      : undefined;
    if (next && !cursor) this.log?.info('inbox page cut', { userId, total, pageSize: INBOX_PAGE_SIZE });
    items.sort((a, b) => b.createdAt - a.createdAt);
    return { items, total, notShown, unreadable, ...(next ? { next } : {}) };
  }

  /**
   * One open gate as the inbox would show it, read from its workflow's memo (no worker); a workflow of an
   * earlier version that keeps no such memo yet is asked (a query) instead.
   */
  private async gateOf(workflowId: string, gateId: string): Promise<Gate | undefined> {
    const described = await withinDeadline(this.client, QUERY_DEADLINE_MS, () =>
      this.client.workflow.getHandle(workflowId).describe(),
    );
    if (described.status.name !== 'RUNNING') return undefined;
    const kept = readMemoGates(described.memo);
    const inMemo = kept.gates.find((gate) => gate.id === gateId);
    // Only a memo of another shape (an older version) or one that keeps fewer gates than are open sends a worker a
    // query; a workflow with no open gates keeps none, and its answer is "not waiting".
    if (inMemo || (!kept.malformed && !kept.notKept)) return inMemo;
    const gates = await withinDeadline(this.client, QUERY_DEADLINE_MS, () =>
      this.client.workflow.getHandle(workflowId).query(pendingGatesQuery),
    );
    const gate = gates.find((g) => g.id === gateId);
    // Read from the worker, it holds arguments however large: kept out as the memo would keep them, so nobody
    // approves from the inbox what the inbox did not show.
    return gate && gateMemos([gate])[gate.id];
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
    return await inBatches(
      targets,
      DECIDE_CONCURRENCY,
      async ({ workflowId, gateId }): Promise<InboxOutcome> => {
        try {
          const gate = await this.gateOf(workflowId, gateId);
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
            this.client.workflow.getHandle(workflowId).signal(
              decideSignal,
              {
                gateId,
                choice: decision.choice,
                userId: item.decideAs,
                ...(decision.reason ? { reason: decision.reason } : {}),
                // Only what the choice uses travels into others' histories.
                ...(decision.choice === 'delegate' && decision.to ? { to: decision.to } : {}),
                ...(decision.choice === 'edit' && decision.args ? { args: decision.args } : {}),
              } satisfies Decision,
              // Sealed in the second place; decided on the web ("Needs you"), whatever id it decides as.
              undefined,
              FROM_THE_INBOX,
            ),
          );
          return { workflowId, gateId, ok: true };
        } catch (error) {
          return failedOutcome(workflowId, gateId, error);
        }
      },
    );
  }

  /** Answers a question in the person's inbox, as the id it names; the workflow validates the answers. */
  async answer(
    userId: string,
    { workflowId, gateId }: { workflowId: string; gateId: string },
    answers: AnswerSubmission['answers'],
  ): Promise<InboxOutcome> {
    try {
      const gate = await this.gateOf(workflowId, gateId);
      const item = gate && inboxItem(this.users, userId, workflowId, gate);
      if (!item) return { workflowId, gateId, ok: false, error: 'no longer waiting on you' };
      if (item.kind !== 'question') return { workflowId, gateId, ok: false, error: 'this is not a question' };
      await withinDeadline(this.client, QUERY_DEADLINE_MS, () =>
        this.client.workflow
          .getHandle(workflowId)
          .signal(
            answerSignal,
            { gateId, userId: item.decideAs, answers } satisfies AnswerSubmission,
            undefined,
            FROM_THE_INBOX,
          ),
      );
      return { workflowId, gateId, ok: true };
    } catch (error) {
      return failedOutcome(workflowId, gateId, error);
    }
  }
}

/** Where an inbox decision is made: the web page, even when it decides as the person's Slack or Teams id. */
const FROM_THE_INBOX = { via: 'web' } as const;

/** Decisions of one batch sent at a time: a batch of 50 is not 100 calls to Temporal at once. */
const DECIDE_CONCURRENCY = 8;

/** `each` over `all`, `width` at a time, results in order. */
async function inBatches<T, R>(all: T[], width: number, each: (one: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < all.length; i += width)
    out.push(...(await Promise.all(all.slice(i, i + width).map(each))));
  return out;
}

function failedOutcome(workflowId: string, gateId: string, error: unknown): InboxOutcome {
  // Nothing about others' workflows is told: a missing one reads like a decided one.
  if (error instanceof WorkflowNotFoundError)
    return { workflowId, gateId, ok: false, error: 'no longer waiting on you' };
  return { workflowId, gateId, ok: false, error: "the agent's server did not answer; try again" };
}
