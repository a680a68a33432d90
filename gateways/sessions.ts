/**
 * The gateway's one way to reach sessions, for every channel (Slack, Discord, web): messages, clicks and
 * forms become signals; views, gates and grants are read with queries or `describe()`. Each platform makes
 * one `Sessions` for its channel.
 */
import { countDecision } from './metrics';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateStage,
  type Client,
  type Connection,
} from '@temporalio/client';
import { z } from 'zod';
import { AgentChannel, AgentOwner, AgentStatus } from '../common/search-attributes';
import { userWorkflowId, webSessionWorkflowId } from '../common/ids';
import { isDecisionSurface, type DecisionSurface } from '../common/chat-ids';
import type { Grant } from '../common/grants';
import { withinDeadline } from '../infra/temporal/deadline';
import { forksOf, startFork, type ForkRequest, type ForkSummary, type StartedFork } from './forks';
import {
  isUnknownSearchAttribute,
  registerSearchAttributesPatiently,
} from '../infra/temporal/search-attributes';
import {
  answerDraftSignal,
  answerSignal,
  decideSignal,
  clickOutcomeQuery,
  pendingGatesQuery,
  repostPendingSignal,
  stopSignal,
  tryModelNowSignal,
  archiveSignal,
  feedbackSignal,
  a2aPushSignal,
  type Feedback,
  revokeGrantSignal,
  stateQuery,
  userMessageSignal,
  type AnswerDraft,
  type AnswerSubmission,
  type Decision,
  type Gate,
  type ClickOutcome,
  type SessionInput,
  type SessionView,
  type UserMessage,
} from '../workflows/session/contract';
import { readGateMemo, type GateMemo } from '../workflows/session/gate-memo';
import { grantsQuery, revokeUserGrantSignal } from '../workflows/user/contract';
import {
  watchViewUpdate,
  type ViewWatchRequest,
  type ViewWatchResult,
} from '../workflows/session/view-watch';

/** What a watch answers, parsed at this edge like every other byte from outside the gateway. */
const viewWatchResultSchema = z.object({
  runId: z.string(),
  version: z.number().int(),
  reconnect: z.enum(['continuing', 'replaced']).optional(),
});

/** A session's current run, as the server knows it (no worker needed). */
export interface SessionRunInfo {
  runId: string;
  running: boolean;
}

/** A gate as its dialogs see it: from the memo (no worker needed) or, for older gates, a query. */
export type GatePrompt = GateMemo & { id: string };

export interface SessionSummary {
  workflowId: string;
  sessionId: string;
  /** The first message's beginning (a memo set at start), for the conversation list. */
  title: string | undefined;
  ownerId: string | undefined;
  status: string | undefined;
  startTime: string;
  /** Archived by its owner: listed apart (the `archived` memo). */
  archived?: boolean;
}

/**
 * Slack and Discord want an acknowledgement within 3 seconds; signals are answered by the server even with
 * no worker running, so 2 s leaves room for the reply.
 */
export const CHAT_DEADLINE_MS = 2_000;

/** Queries need a worker: they answer within a few seconds or throw. */
const QUERY_DEADLINE_MS = 3_000;

/**
 * The web chat's bound on each call: a stopped server is reported to the person within ~2 s ("not sent, try
 * again"), while the page keeps their text. Watches (long polls) are not bounded by it.
 */
export const WEB_DEADLINE_MS = 2_000;

export class Sessions {
  /**
   * @param deadlineMs bound on every call (signals are answered by the server even with no worker
   *   running): the chat platforms keep their 3-second acknowledgement limit with it, the web chat its own.
   */
  /** Where this gateway's decisions and answers are made, told with each (the audit's `via`). */
  private readonly surface: DecisionSurface;

  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly channel: SessionInput['channel'],
    private readonly deadlineMs: number,
    surface?: DecisionSurface,
  ) {
    this.surface = surface ?? (isDecisionSurface(channel) ? channel : 'web');
  }

  /** Every call has a bound (infra/temporal/deadline.ts): an outage is reported in seconds, not minutes. */
  private async within<T>(fn: () => Promise<T>, ms = this.deadlineMs): Promise<T> {
    return await withinDeadline(this.client, ms, fn);
  }

  private handle(workflowId: string) {
    return this.client.workflow.getHandle(workflowId);
  }

  /** Set at start so a session is searchable (and its owner known) even before a worker picks it up. */
  private searchAttributes(ownerId: string) {
    return [
      { key: AgentStatus, value: 'running' },
      { key: AgentChannel, value: this.channel },
      { key: AgentOwner, value: ownerId },
    ];
  }

  /**
   * A fresh server no worker has prepared yet: the gateway registers the attributes itself and tries again, with
   * backoff for a few seconds (a real server maps newly registered attributes only after its cache refreshes).
   */
  private async withSearchAttributes<T>(start: () => Promise<T>): Promise<T> {
    try {
      return await start();
    } catch (error) {
      if (!isUnknownSearchAttribute(error)) throw error;
      await registerSearchAttributesPatiently(
        this.client.connection as Connection,
        this.client.options.namespace,
        () => {},
        { totalMs: 10_000 },
      );
      const deadline = Date.now() + 5_000;
      for (let wait = 100; ; wait = Math.min(wait * 2, 1_000)) {
        try {
          return await start();
        } catch (again) {
          if (!isUnknownSearchAttribute(again) || Date.now() + wait > deadline) throw again;
          await new Promise((resolve) => setTimeout(resolve, wait));
        }
      }
    }
  }

  /**
   * A message that may start the conversation (a mention, a DM, a slash command, the web chat's first
   * message): signal-with-start, so the first message creates the session and later ones reach it.
   */
  async start(workflowId: string, message: UserMessage, sessionId = workflowId): Promise<void> {
    const input: SessionInput = { sessionId, channel: this.channel, ownerId: message.userId };
    await this.withSearchAttributes(() =>
      this.within(() =>
        this.client.workflow.signalWithStart('sessionWorkflow', {
          workflowId,
          taskQueue: this.taskQueue,
          args: [input],
          signal: userMessageSignal,
          signalArgs: [message],
          typedSearchAttributes: this.searchAttributes(message.userId),
        }),
      ),
    );
  }

  /**
   * Starts a new web session owned by the message's author, then delivers the message. Unlike
   * signal-with-start it fails when someone started that id in the meantime (false), so nobody's message
   * can land in a session another person squatted between the access check and the start.
   */
  async startOwned(sessionId: string, message: UserMessage): Promise<boolean> {
    const workflowId = webSessionWorkflowId(sessionId);
    const input: SessionInput = { sessionId, channel: this.channel, ownerId: message.userId };
    try {
      await this.withSearchAttributes(() =>
        this.within(() =>
          this.client.workflow.start('sessionWorkflow', {
            workflowId,
            taskQueue: this.taskQueue,
            args: [input],
            workflowIdConflictPolicy: 'FAIL',
            typedSearchAttributes: this.searchAttributes(message.userId),
            // The conversation's title in lists: set by the client at start, so no workflow code is involved.
            memo: { title: conversationTitle(message.text) },
          }),
        ),
      );
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw error;
    }
    await this.within(() => this.handle(workflowId).signal(userMessageSignal, message));
    return true;
  }

  /** A plain message in a thread: only reaches a conversation the agent is already part of. */
  async continue(workflowId: string, message: UserMessage): Promise<boolean> {
    try {
      await this.within(() => this.handle(workflowId).signal(userMessageSignal, message));
      return true;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  }

  /** `via`: where it was decided when this gateway takes decisions on several surfaces (AG-UI, A2A). */
  async decide(workflowId: string, decision: Decision, via = this.surface): Promise<void> {
    // The seal goes in the second place (infra/temporal/sealing-interceptor.ts), where it was made in the third.
    await this.counted('decision', () =>
      this.handle(workflowId).signal(decideSignal, decision, undefined, { via }),
    );
  }

  async answer(workflowId: string, submission: AnswerSubmission, via = this.surface): Promise<void> {
    await this.counted('answer', () =>
      this.handle(workflowId).signal(answerSignal, submission, undefined, { via }),
    );
  }

  /** A decision or answer sent, counted for the gateway's metrics by channel and whether it went through. */
  private async counted(kind: 'decision' | 'answer', send: () => Promise<void>): Promise<void> {
    try {
      await this.within(send);
      countDecision(this.channel, kind, true);
    } catch (error) {
      countDecision(this.channel, kind, false);
      throw error;
    }
  }

  /** The conversation's status as its search attribute says (served while no worker runs); none: no such conversation. */
  async status(workflowId: string): Promise<string | undefined> {
    return await this.within(async () => {
      try {
        const info = await this.handle(workflowId).describe();
        return info.status.name === 'RUNNING' ? info.typedSearchAttributes.get(AgentStatus) : undefined;
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return undefined;
        throw error;
      }
    });
  }

  /** A person's rating of an answer (Slack's feedback buttons). */
  async rate(workflowId: string, feedback: Feedback): Promise<void> {
    await this.within(() => this.handle(workflowId).signal(feedbackSignal, feedback));
  }

  /** Have the conversation push an A2A task's changes (its push configs are in the vault). */
  async followA2aTask(workflowId: string, taskId: string): Promise<void> {
    await this.within(() => this.handle(workflowId).signal(a2aPushSignal, { taskId }));
  }

  /** Try every model now instead of waiting out a provider's retry-after (the workflow checks who may). */
  async tryModelNow(workflowId: string, userId: string): Promise<void> {
    await this.within(() => this.handle(workflowId).signal(tryModelNowSignal, { userId }));
  }

  /** Stop the running turn (the workflow checks who may, and tells anyone else). */
  async stop(workflowId: string, userId: string): Promise<void> {
    await this.within(() => this.handle(workflowId).signal(stopSignal, { userId }));
  }

  async archive(workflowId: string, userId: string, archived: boolean): Promise<void> {
    await this.within(() => this.handle(workflowId).signal(archiveSignal, { userId, archived }));
  }

  async answerDraft(workflowId: string, draft: AnswerDraft): Promise<void> {
    await this.within(() => this.handle(workflowId).signal(answerDraftSignal, draft));
  }

  async repostPending(workflowId: string, userId: string): Promise<void> {
    await this.within(() => this.handle(workflowId).signal(repostPendingSignal, { userId }));
  }

  /** A new conversation forked from `request.from` (gateways/forks.ts): reads the original (needs a worker). */
  async fork(request: ForkRequest): Promise<StartedFork> {
    return await startFork(
      this.client,
      this.taskQueue,
      request,
      Math.max(this.deadlineMs, QUERY_DEADLINE_MS),
    );
  }

  /** The conversation's forks, from visibility (no worker needed). */
  async forks(workflowId: string, owners?: readonly string[]): Promise<ForkSummary[]> {
    return await forksOf(this.client, workflowId, Math.max(this.deadlineMs, QUERY_DEADLINE_MS), {
      ...(owners ? { owners } : {}),
    });
  }

  /** The session's view (needs a worker); without a run id, the latest run's. */
  async state(workflowId: string, runId?: string): Promise<SessionView> {
    return await this.within(
      () => this.client.workflow.getHandle(workflowId, runId).query(stateQuery),
      Math.max(this.deadlineMs, QUERY_DEADLINE_MS),
    );
  }

  /** Answered by the server alone; undefined when no such workflow exists. */
  async currentRun(workflowId: string): Promise<SessionRunInfo | undefined> {
    try {
      const description = await this.within(() => this.handle(workflowId).describe(), QUERY_DEADLINE_MS);
      return { runId: description.runId, running: description.status.name === 'RUNNING' };
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    }
  }

  /**
   * Waits until the session's view moves past `request` (see workflows/session/view-watch.ts): as long as it
   * takes (a worker must take it first), until `signal` aborts.
   */
  async watchView(
    workflowId: string,
    request: ViewWatchRequest,
    signal: AbortSignal,
  ): Promise<ViewWatchResult> {
    return await this.client.withAbortSignal(signal, async () => {
      const update = await this.handle(workflowId).startUpdate(watchViewUpdate, {
        args: [request],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      return viewWatchResultSchema.parse(await update.result());
    });
  }

  /** What became of a click (needs a worker): the gate now, and notices to the clicker since `since`. */
  async clickOutcome(
    workflowId: string,
    args: { gateId: string; userId: string; since: number },
    ms: number,
  ): Promise<ClickOutcome> {
    return await this.within(() => this.handle(workflowId).query(clickOutcomeQuery, args), ms);
  }

  /** Needs a worker (a query); used to fill the Edit and Answer dialogs. */
  async gate(workflowId: string, gateId: string): Promise<Gate | undefined> {
    const gates = await this.within(() => this.handle(workflowId).query(pendingGatesQuery));
    return gates.find((g) => g.id === gateId);
  }

  /**
   * What a gate's dialog needs, from the memo the workflow keeps when the gate opens: the server answers
   * `describe()` with no worker running. Gates opened before the memo existed fall back to a query.
   */
  async gatePrompt(
    workflowId: string,
    gateId: string,
    ms = this.deadlineMs,
  ): Promise<GatePrompt | undefined> {
    const described = await this.within(() => this.handle(workflowId).describe(), ms);
    const memo = readGateMemo(described.memo, gateId);
    if (memo) return { id: gateId, ...memo };
    if (described.status.name !== 'RUNNING') return undefined;
    const gate = await this.gate(workflowId, gateId).catch(() => undefined);
    if (gate?.kind === 'approval')
      return {
        id: gate.id,
        kind: 'approval',
        toolName: gate.toolName,
        args: gate.args,
        argsChars: JSON.stringify(gate.args).length,
      };
    if (gate?.kind === 'question') return { id: gate.id, kind: 'question', questions: gate.questions };
    return undefined;
  }

  /** The workflow's memo (its open gates among it), answered by the server alone: no worker needed. */
  async memo(workflowId: string): Promise<Record<string, unknown> | undefined> {
    return (await this.within(() => this.handle(workflowId).describe(), QUERY_DEADLINE_MS)).memo;
  }

  /** Running sessions of this channel whose id starts with `prefix` that wait on a person (for `pending`). */
  async waitingWithPrefix(prefix: string): Promise<string[]> {
    const query = `AgentChannel = '${this.channel}' AND ExecutionStatus = 'Running' AND AgentStatus IN ('waiting_approval', 'waiting_answer')`;
    return await this.within(async () => {
      const ids: string[] = [];
      for await (const info of this.client.workflow.list({ query, pageSize: 100 }))
        if (info.workflowId.startsWith(prefix)) ids.push(info.workflowId);
      return ids;
    });
  }

  /** The caller's own running sessions of this channel (user ids never contain quotes: see userIdSchema). */
  async list(ownerId: string, limit = 50): Promise<SessionSummary[]> {
    const owner = ownerId.replace(/['"\\]/g, '');
    const query = `WorkflowType = 'sessionWorkflow' AND AgentChannel = '${this.channel}' AND ExecutionStatus = 'Running' AND AgentOwner = '${owner}'`;
    return await this.within(
      async () => {
        const out: SessionSummary[] = [];
        for await (const info of this.client.workflow.list({ query, pageSize: limit })) {
          out.push({
            workflowId: info.workflowId,
            sessionId: info.workflowId.replace(/^session:web:/, ''),
            title: typeof info.memo?.title === 'string' ? info.memo.title : undefined,
            ownerId: info.typedSearchAttributes.get(AgentOwner),
            status: info.typedSearchAttributes.get(AgentStatus),
            startTime: info.startTime.toISOString(),
            ...(info.memo?.archived === true ? { archived: true } : {}),
          });
          if (out.length >= limit) break;
        }
        return out;
      },
      Math.max(this.deadlineMs, QUERY_DEADLINE_MS),
    );
  }

  async userGrants(userId: string): Promise<Grant[]> {
    try {
      return await this.within(
        () => this.handle(userWorkflowId(userId)).query(grantsQuery),
        Math.max(this.deadlineMs, QUERY_DEADLINE_MS),
      );
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return [];
      throw error;
    }
  }

  async revokeUserGrant(userId: string, grantId: string): Promise<void> {
    try {
      await this.within(() => this.handle(userWorkflowId(userId)).signal(revokeUserGrantSignal, { grantId }));
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  }

  async revokeSessionGrant(workflowId: string, userId: string, grantId: string): Promise<void> {
    await this.within(() => this.handle(workflowId).signal(revokeGrantSignal, { grantId, userId }));
  }
}

/** A conversation's title: its first message's first line, at most 80 characters. */
export function conversationTitle(text: string): string {
  const line = text.trim().split('\n')[0]!.replace(/\s+/g, ' ');
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
