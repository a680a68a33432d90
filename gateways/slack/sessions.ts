/** Temporal-facing operations of the Slack gateway: every Slack event or click becomes a signal. */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { signalWithStartSession } from '../start-session';
import {
  answerSignal,
  decideSignal,
  pendingGatesQuery,
  repostPendingSignal,
  userMessageSignal,
  type AnswerSubmission,
  type Decision,
  type Gate,
  type UserMessage,
} from '../../workflows/session/contract';
import { slackSessionWorkflowId, type SlackThread } from './ids';

/** Signals are answered by the server even with no worker running; the deadline keeps Slack's 3 s limit. */
const SIGNAL_DEADLINE_MS = 2_000;

export class SlackSessions {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  private within<T>(fn: () => Promise<T>): Promise<T> {
    return this.client.withDeadline(Date.now() + SIGNAL_DEADLINE_MS, fn);
  }

  /** A message that may start the conversation (mention, DM): signal-with-start. */
  async start(thread: SlackThread, message: UserMessage): Promise<void> {
    const workflowId = slackSessionWorkflowId(thread);
    await this.within(() =>
      signalWithStartSession(this.client, {
        workflowId,
        sessionId: workflowId,
        channel: 'slack',
        taskQueue: this.taskQueue,
        message,
      }),
    );
  }

  /** A plain message in a thread: only reaches a conversation the agent is already part of. */
  async continue(thread: SlackThread, message: UserMessage): Promise<boolean> {
    try {
      await this.within(() =>
        this.client.workflow.getHandle(slackSessionWorkflowId(thread)).signal(userMessageSignal, message),
      );
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

  /** Running Slack sessions of one channel that wait on a person (for `/agent pending`). */
  async waitingInChannel(team: string, channel: string): Promise<string[]> {
    const prefix = `session:slack:${team}:${channel}:`;
    const ids: string[] = [];
    const query = `AgentChannel = 'slack' AND ExecutionStatus = 'Running' AND AgentStatus IN ('waiting_approval', 'waiting_answer')`;
    for await (const info of this.client.workflow.list({ query, pageSize: 100 }))
      if (info.workflowId.startsWith(prefix)) ids.push(info.workflowId);
    return ids;
  }
}
