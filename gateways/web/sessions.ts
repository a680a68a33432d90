/** Temporal-facing operations of the web chat: start or message a session, decide, read state, grants. */
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type Client,
  type Connection,
} from '@temporalio/client';
import { AgentChannel, AgentOwner, AgentStatus } from '../../common/search-attributes';
import { registerSearchAttributes } from '../../infra/temporal/search-attributes';
import { isUnknownSearchAttribute, signalWithStartSession } from '../start-session';
import { userWorkflowId, webSessionWorkflowId } from '../../common/ids';
import type { Grant } from '../../common/grants';
import {
  answerSignal,
  decideSignal,
  revokeGrantSignal,
  stateQuery,
  userMessageSignal,
  type SessionInput,
  type AnswerSubmission,
  type Decision,
  type SessionView,
  type UserMessage,
} from '../../workflows/session/contract';
import { grantsQuery, revokeUserGrantSignal } from '../../workflows/user/contract';

const QUERY_DEADLINE_MS = 3_000;

export interface SessionSummary {
  workflowId: string;
  sessionId: string;
  ownerId: string | undefined;
  status: string | undefined;
  startTime: string;
}

export class WebSessions {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  /**
   * Starts a new session owned by the message's author, then delivers the message. Unlike signal-with-start it
   * fails when someone started that id in the meantime (false), so nobody's message can land in a session
   * another person squatted between the access check and the start.
   */
  async startOwned(sessionId: string, message: UserMessage): Promise<boolean> {
    const workflowId = webSessionWorkflowId(sessionId);
    const input: SessionInput = { sessionId, channel: 'web', ownerId: message.userId };
    const start = () =>
      this.client.workflow.start('sessionWorkflow', {
        workflowId,
        taskQueue: this.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'FAIL',
        typedSearchAttributes: [
          { key: AgentStatus, value: 'running' },
          { key: AgentChannel, value: 'web' },
          { key: AgentOwner, value: message.userId },
        ],
      });
    try {
      await start().catch(async (error: unknown) => {
        if (!isUnknownSearchAttribute(error)) throw error;
        await registerSearchAttributes(
          this.client.connection as Connection,
          this.client.options.namespace,
          () => {},
        );
        await start();
      });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw error;
    }
    await this.client.workflow.getHandle(workflowId).signal(userMessageSignal, message);
    return true;
  }

  /** Signal-with-start: the first message creates the session, later ones reach the same workflow. */
  async sendMessage(sessionId: string, message: UserMessage): Promise<void> {
    const workflowId = webSessionWorkflowId(sessionId);
    await signalWithStartSession(this.client, {
      workflowId,
      sessionId,
      channel: 'web',
      taskQueue: this.taskQueue,
      message,
    });
  }

  async answer(workflowId: string, submission: AnswerSubmission): Promise<void> {
    await this.client.workflow.getHandle(workflowId).signal(answerSignal, submission);
  }

  async decide(workflowId: string, decision: Decision): Promise<void> {
    await this.client.workflow.getHandle(workflowId).signal(decideSignal, decision);
  }

  /** Needs a worker: answers within a few seconds or throws. */
  async state(workflowId: string): Promise<SessionView> {
    return await this.client.withDeadline(Date.now() + QUERY_DEADLINE_MS, () =>
      this.client.workflow.getHandle(workflowId).query(stateQuery),
    );
  }

  /** The caller's own running web sessions (user ids never contain quotes: see userIdSchema). */
  async list(ownerId: string, limit = 50): Promise<SessionSummary[]> {
    const out: SessionSummary[] = [];
    const owner = ownerId.replace(/['"\\]/g, '');
    const query = `WorkflowType = 'sessionWorkflow' AND AgentChannel = 'web' AND ExecutionStatus = 'Running' AND AgentOwner = '${owner}'`;
    for await (const info of this.client.workflow.list({ query, pageSize: limit })) {
      out.push({
        workflowId: info.workflowId,
        sessionId: info.workflowId.replace(/^session:web:/, ''),
        ownerId: info.typedSearchAttributes.get(AgentOwner),
        status: info.typedSearchAttributes.get(AgentStatus),
        startTime: info.startTime.toISOString(),
      });
      if (out.length >= limit) break;
    }
    return out;
  }

  async userGrants(userId: string): Promise<Grant[]> {
    try {
      return await this.client.withDeadline(Date.now() + QUERY_DEADLINE_MS, () =>
        this.client.workflow.getHandle(userWorkflowId(userId)).query(grantsQuery),
      );
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return [];
      throw error;
    }
  }

  async revokeUserGrant(userId: string, grantId: string): Promise<void> {
    try {
      await this.client.workflow.getHandle(userWorkflowId(userId)).signal(revokeUserGrantSignal, { grantId });
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  }

  async revokeSessionGrant(workflowId: string, userId: string, grantId: string): Promise<void> {
    await this.client.workflow.getHandle(workflowId).signal(revokeGrantSignal, { grantId, userId });
  }
}
