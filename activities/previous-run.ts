/** Finds a session's most recent closed run and reads its transcript, so a new run can continue from it. */
import { QueryNotRegisteredError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { transcriptQuery, type Message } from '../workflows/session/contract';

/**
 * `[]` only when there is no earlier run; a run that exists but cannot be read throws, so the session says
 * so instead of silently starting empty.
 */
export async function previousRunTranscript(client: Client, workflowId: string): Promise<Message[]> {
  const escaped = workflowId.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
  let latest: { runId: string; closeTime: Date } | undefined;
  for await (const run of client.workflow.list({
    query: `WorkflowId = '${escaped}' AND ExecutionStatus != 'Running'`,
    pageSize: 20,
  })) {
    if (run.closeTime && (!latest || run.closeTime > latest.closeTime))
      latest = { runId: run.runId, closeTime: run.closeTime };
  }
  if (!latest) return [];
  try {
    return await client.workflow.getHandle(workflowId, latest.runId).query(transcriptQuery);
  } catch (error) {
    const message = `the transcript of the earlier run ${latest.runId} could not be read: ${error instanceof Error ? error.message : String(error)}`;
    // A run that cannot answer the query (another workflow type, a failed replay) never will: do not retry.
    if (error instanceof QueryNotRegisteredError)
      throw ApplicationFailure.create({
        message,
        type: 'PreviousRunUnreadable',
        nonRetryable: true,
        cause: error,
      });
    throw new Error(message, { cause: error });
  }
}
