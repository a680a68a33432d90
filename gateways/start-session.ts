/** Signal-with-start of a session, shared by every platform: the first message creates it, later ones reach it. */
import type { Client } from '@temporalio/client';
import { AgentChannel, AgentOwner, AgentStatus } from '../common/search-attributes';
import { userMessageSignal, type SessionInput, type UserMessage } from '../workflows/session/contract';

export async function signalWithStartSession(
  client: Client,
  options: {
    workflowId: string;
    sessionId: string;
    channel: SessionInput['channel'];
    taskQueue: string;
    message: UserMessage;
  },
): Promise<void> {
  const input: SessionInput = {
    sessionId: options.sessionId,
    channel: options.channel,
    ownerId: options.message.userId,
  };
  await client.workflow.signalWithStart('sessionWorkflow', {
    workflowId: options.workflowId,
    taskQueue: options.taskQueue,
    args: [input],
    signal: userMessageSignal,
    signalArgs: [options.message],
    // Set at start so the session is searchable even before a worker picks it up.
    typedSearchAttributes: [
      { key: AgentStatus, value: 'running' },
      { key: AgentChannel, value: options.channel },
      { key: AgentOwner, value: options.message.userId },
    ],
  });
}
