/** Workflow history as searchable text: every payload decoded, so a scan for a secret really sees the data. */
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';

export function historyText(history: temporal.api.history.v1.IHistory): string {
  const parts: string[] = [];
  const walk = (value: unknown): void => {
    if (value instanceof Uint8Array) parts.push(Buffer.from(value).toString('utf8'));
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
    else if (typeof value === 'string') parts.push(value);
  };
  walk(history);
  return parts.join('\n');
}

export interface RunRef {
  workflowId: string;
  runId: string;
}

/** Every run (open or closed) that a visibility query finds. */
export async function runsOf(client: Client, query: string): Promise<RunRef[]> {
  const runs: RunRef[] = [];
  for await (const run of client.workflow.list({ query }))
    runs.push({ workflowId: run.workflowId, runId: run.runId });
  return runs;
}

/** The runs among `runs` with a workflow task that failed on nondeterminism (what a bad deploy looks like). */
export async function nondeterminismIn(client: Client, runs: RunRef[]): Promise<string[]> {
  const failed: string[] = [];
  for (const { workflowId, runId } of runs) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    for (const event of history.events ?? []) {
      const failure = event.workflowTaskFailedEventAttributes;
      const cause =
        temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR;
      if (
        failure &&
        (failure.cause === cause || /nondetermin|TMPRL1100/i.test(failure.failure?.message ?? ''))
      )
        failed.push(`${workflowId} ${runId}: ${failure.failure?.message?.slice(0, 200)}`);
    }
  }
  return failed;
}
