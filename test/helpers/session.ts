/** Driving a session workflow from a test the way a gateway does: signal-with-start, signals, queries. */
import { randomInt, randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { slackSessionWorkflowIdOf, webSessionWorkflowId } from '../../common/ids';
import { sealingClient } from '../../infra/temporal/sealing-interceptor';
import { TEST_GATEWAY_KEY } from './config';
import {
  answerSignal,
  decideSignal,
  stateQuery,
  userMessageSignal,
  type AnswerSubmission,
  type ApprovalGate,
  type QuestionGate,
  type Decision,
  type SessionInput,
  type SessionView,
} from '../../workflows/session/contract';

export class TestSession {
  sessionId: string = randomUUID();
  workflowId = webSessionWorkflowId(this.sessionId);
  channel: SessionInput['channel'] = 'web';
  /** How often waitFor polls the workflow's state (benchmarks poll faster for finer figures). */
  pollMs = 150;

  readonly client: Client;

  /** Plays a gateway: what it sends in a person's name is sealed with the tests' gateway key. */
  constructor(
    client: Client,
    readonly taskQueue: string,
  ) {
    this.client = sealingClient(client, TEST_GATEWAY_KEY);
  }

  /** The same session as a Slack thread's (its deliveries go to the Slack Web API the worker is given). */
  inSlackThread(): this {
    const threadTs = `${Math.floor(Date.now() / 1000)}.${String(randomInt(1e6)).padStart(6, '0')}`;
    this.sessionId = this.workflowId = slackSessionWorkflowIdOf('T1', 'C1', threadTs);
    this.channel = 'slack';
    return this;
  }

  get handle(): WorkflowHandle {
    return this.client.workflow.getHandle(this.workflowId);
  }

  async say(text: string, userId = 'alice'): Promise<void> {
    const input: SessionInput = { sessionId: this.sessionId, channel: this.channel, ownerId: userId };
    await this.client.workflow.signalWithStart('sessionWorkflow', {
      workflowId: this.workflowId,
      taskQueue: this.taskQueue,
      args: [input],
      signal: userMessageSignal,
      signalArgs: [{ messageId: randomUUID(), userId, text }],
    });
  }

  async decide(decision: Omit<Decision, 'userId'> & { userId?: string }): Promise<void> {
    await this.handle.signal(decideSignal, { userId: 'alice', ...decision });
  }

  async state(): Promise<SessionView> {
    return await this.handle.query(stateQuery);
  }

  /** Polls the workflow's state until the predicate holds (the workflow is the source of truth). */
  async waitFor(
    predicate: (view: SessionView) => boolean,
    what: string,
    timeoutMs = 30_000,
  ): Promise<SessionView> {
    const deadline = Date.now() + timeoutMs;
    let last: SessionView | undefined;
    while (Date.now() < deadline) {
      try {
        last = await this.state();
        if (predicate(last)) return last;
      } catch {
        // not started yet, or no worker at this moment
      }
      await new Promise((resolve) => setTimeout(resolve, this.pollMs));
    }
    throw new Error(
      `timed out waiting for ${what}; last state: ${JSON.stringify(last, null, 1)?.slice(0, 3000)}`,
    );
  }

  async pendingGate(count = 1): Promise<ApprovalGate[]> {
    const view = await this.waitFor(
      (v) => v.gates.filter((g) => g.status === 'pending' && g.kind === 'approval').length >= count,
      `${count} pending gate(s)`,
    );
    return view.gates.filter((g): g is ApprovalGate => g.status === 'pending' && g.kind === 'approval');
  }

  async pendingQuestion(): Promise<QuestionGate> {
    const view = await this.waitFor(
      (v) => v.gates.some((g) => g.status === 'pending' && g.kind === 'question'),
      'a pending question',
    );
    return view.gates.find((g): g is QuestionGate => g.status === 'pending' && g.kind === 'question')!;
  }

  async answer(gateId: string, answers: AnswerSubmission['answers'], userId = 'alice'): Promise<void> {
    await this.handle.signal(answerSignal, { gateId, userId, answers });
  }

  /** Waits for the turn to finish: idle, nothing queued, last message from the assistant. */
  async idle(): Promise<SessionView> {
    return await this.waitFor(
      (v) => v.status === 'idle' && v.queued === 0 && v.transcript.at(-1)?.role === 'assistant',
      'the session to go idle with an answer',
    );
  }
}

export function lastAnswer(view: SessionView): string {
  const last = view.transcript.at(-1);
  return last?.role === 'assistant' ? last.text : '';
}

export function toolResults(view: SessionView) {
  return view.transcript.flatMap((m) => (m.role === 'tool' ? [m] : []));
}
