/** Temporal-facing operations of the chat gateways (Slack, Discord): every event or click becomes a signal. */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { signalWithStartSession } from './start-session';
import {
  answerDraftSignal,
  answerSignal,
  decideSignal,
  gateFeedbackQuery,
  pendingGatesQuery,
  repostPendingSignal,
  userMessageSignal,
  type AnswerDraft,
  type AnswerSubmission,
  type GateFeedback,
  type Decision,
  type Gate,
  type UserMessage,
} from '../workflows/session/contract';
import { readGateMemo, type GateMemo } from '../workflows/session/gate-memo';

/** A gate as its dialogs see it: from the memo (no worker needed) or, for older gates, a query. */
export type GatePrompt = GateMemo & { id: string };

/**
 * Signals are answered by the server even with no worker running; the deadline keeps the platforms'
 * 3-second acknowledgement limit.
 */
const SIGNAL_DEADLINE_MS = 2_000;

export class ChatSessions {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly channel: 'slack' | 'discord',
    private readonly deadlineMs = SIGNAL_DEADLINE_MS,
  ) {}

  /**
   * While the server is unreachable the client's deadline is no bound (its reconnect backoff comes on top:
   * over 3 s measured), so a timer is. A call that still lands later is harmless: messages carry their id,
   * which the workflow takes once, and a repeated click is answered "already decided".
   */
  private async within<T>(fn: () => Promise<T>, ms = this.deadlineMs): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the Temporal server did not answer within ${ms} ms`)), ms);
    });
    try {
      return await Promise.race([this.client.withDeadline(Date.now() + ms, fn), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A message that may start the conversation (mention, DM, slash command): signal-with-start. */
  async start(workflowId: string, message: UserMessage): Promise<void> {
    await this.within(() =>
      signalWithStartSession(this.client, {
        workflowId,
        sessionId: workflowId,
        channel: this.channel,
        taskQueue: this.taskQueue,
        message,
      }),
    );
  }

  /** A plain message in a thread: only reaches a conversation the agent is already part of. */
  async continue(workflowId: string, message: UserMessage): Promise<boolean> {
    try {
      await this.within(() => this.client.workflow.getHandle(workflowId).signal(userMessageSignal, message));
      return true;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  }

  async decide(workflowId: string, decision: Decision): Promise<void> {
    await this.within(() => this.client.workflow.getHandle(workflowId).signal(decideSignal, decision));
  }

  async answer(workflowId: string, submission: AnswerSubmission): Promise<void> {
    await this.within(() => this.client.workflow.getHandle(workflowId).signal(answerSignal, submission));
  }

  async answerDraft(workflowId: string, draft: AnswerDraft): Promise<void> {
    await this.within(() => this.client.workflow.getHandle(workflowId).signal(answerDraftSignal, draft));
  }

  /** What became of a click (needs a worker): the gate now, and notices to the clicker since `since`. */
  async feedback(
    workflowId: string,
    args: { gateId: string; userId: string; since: number },
    ms: number,
  ): Promise<GateFeedback> {
    return await this.within(
      () => this.client.workflow.getHandle(workflowId).query(gateFeedbackQuery, args),
      ms,
    );
  }

  async repostPending(workflowId: string, userId: string): Promise<void> {
    await this.within(() =>
      this.client.workflow.getHandle(workflowId).signal(repostPendingSignal, { userId }),
    );
  }

  /** Needs a worker (a query); used to fill the Edit and Answer dialogs. */
  async gate(workflowId: string, gateId: string): Promise<Gate | undefined> {
    const gates = await this.within(() =>
      this.client.workflow.getHandle(workflowId).query(pendingGatesQuery),
    );
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
    const described = await this.within(() => this.client.workflow.getHandle(workflowId).describe(), ms);
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

  /** Running sessions whose id starts with `prefix` that wait on a person (for `pending`). */
  async waitingWithPrefix(prefix: string): Promise<string[]> {
    const query = `AgentChannel = '${this.channel}' AND ExecutionStatus = 'Running' AND AgentStatus IN ('waiting_approval', 'waiting_answer')`;
    return await this.within(async () => {
      const ids: string[] = [];
      for await (const info of this.client.workflow.list({ query, pageSize: 100 }))
        if (info.workflowId.startsWith(prefix)) ids.push(info.workflowId);
      return ids;
    });
  }
}
