/** Export and import of session transcripts (JSON Lines), used by the `agentctl` command. */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { webSessionIdSchema, webSessionWorkflowId } from '../../common/ids';
import { AgentChannel, AgentOwner, AgentStatus } from '../../common/search-attributes';
import { fromJsonl, toJsonl } from '../../common/transcript-format';
import { transcriptQuery, type SessionInput } from '../../workflows/session/contract';

/** Imports above this size would crowd Temporal's 2 MB payload limit. */
export const MAX_IMPORT_BYTES = 1_500_000;

/** A bare web session id or a full workflow id (`session:slack:…`). */
export function resolveSessionWorkflowId(session: string): string {
  return session.startsWith('session:') ? session : webSessionWorkflowId(session);
}

export async function exportTranscript(client: Client, session: string): Promise<string> {
  const messages = await client.workflow.getHandle(resolveSessionWorkflowId(session)).query(transcriptQuery);
  return toJsonl(messages);
}

/**
 * Starts a web session from a JSONL transcript. The session repairs the tail on start (interrupted tool
 * calls get results, an orphan user turn gets a recovery marker) and then continues like any other.
 */
export async function importTranscript(
  client: Client,
  options: { taskQueue: string; sessionId: string; text: string; owner?: string },
): Promise<{ workflowId: string; messages: number }> {
  if (!webSessionIdSchema.safeParse(options.sessionId).success)
    throw new Error(`"${options.sessionId}" is not a valid session id (1-64 letters, digits, - or _)`);
  if (Buffer.byteLength(options.text) > MAX_IMPORT_BYTES)
    throw new Error(
      `the transcript is larger than ${MAX_IMPORT_BYTES} bytes; split it or trim tool outputs first`,
    );
  const parsed = fromJsonl(options.text);
  if (!parsed.ok) throw new Error(`the transcript cannot be imported:\n  ${parsed.errors.join('\n  ')}`);
  const firstUser = parsed.messages.find((m) => m.role === 'user');
  const owner = options.owner ?? (firstUser?.role === 'user' ? firstUser.userId : 'local');
  const workflowId = webSessionWorkflowId(options.sessionId);
  const input: SessionInput = {
    sessionId: options.sessionId,
    channel: 'web',
    ownerId: owner,
    carried: { transcript: parsed.messages, grants: [], inbox: [], notices: [], gates: [] },
  };
  try {
    await client.workflow.start('sessionWorkflow', {
      workflowId,
      taskQueue: options.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'FAIL',
      typedSearchAttributes: [
        { key: AgentStatus, value: 'idle' },
        { key: AgentChannel, value: 'web' },
        { key: AgentOwner, value: owner },
      ],
    });
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError)
      throw new Error(`session ${options.sessionId} is already running: import under another id`, {
        cause: error,
      });
    throw error;
  }
  return { workflowId, messages: parsed.messages.length };
}
