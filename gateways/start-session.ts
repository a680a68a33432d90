/** Signal-with-start of a session, shared by every platform: the first message creates it, later ones reach it. */
import type { Client, Connection } from '@temporalio/client';
import { AgentChannel, AgentOwner, AgentStatus } from '../common/search-attributes';
import { registerSearchAttributes } from '../infra/temporal/search-attributes';
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
  const start = () =>
    client.workflow.signalWithStart('sessionWorkflow', {
      workflowId: options.workflowId,
      taskQueue: options.taskQueue,
      args: [input],
      signal: userMessageSignal,
      signalArgs: [options.message],
      // Set at start so the session is searchable (and its owner known) even before a worker picks it up.
      typedSearchAttributes: [
        { key: AgentStatus, value: 'running' },
        { key: AgentChannel, value: options.channel },
        { key: AgentOwner, value: options.message.userId },
      ],
    });
  try {
    await start();
  } catch (error) {
    if (!isUnknownSearchAttribute(error)) throw error;
    // A fresh server no worker has prepared yet: the gateway registers them itself (idempotent) and retries.
    await registerSearchAttributes(client.connection as Connection, client.options.namespace, () => {});
    await start();
  }
}

/** The server's INVALID_ARGUMENT for a search attribute the namespace does not know. */
export function isUnknownSearchAttribute(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  return cause?.code === 3 && /search attribute/i.test(String(cause.message));
}
