/** Workflow history as searchable text: every payload decoded, so a scan for a secret really sees the data. */
import { temporal } from '@temporalio/proto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { until } from './until';

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

/**
 * A run's history length once nothing it started is still in flight: no workflow task scheduled or running and
 * every external signal it sent answered. Read earlier, a count races the run's own bookkeeping (the task that
 * records "signal delivered" lands a moment after the receiver shows the signal).
 */
export async function settledHistoryLength(handle: WorkflowHandle): Promise<number> {
  const Type = temporal.api.enums.v1.EventType;
  return until(`${handle.workflowId} settled`, async () => {
    const described = await handle.describe();
    if (described.raw.pendingWorkflowTask) return undefined;
    const events = (await handle.fetchHistory()).events ?? [];
    const initiated = new Set<string>();
    for (const event of events) {
      if (event.eventType === Type.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED)
        initiated.add(String(event.eventId));
      const answered =
        event.externalWorkflowExecutionSignaledEventAttributes?.initiatedEventId ??
        event.signalExternalWorkflowExecutionFailedEventAttributes?.initiatedEventId;
      if (answered != null) initiated.delete(String(answered));
    }
    if (initiated.size > 0) return undefined;
    const settled = (await handle.describe()).historyLength;
    return settled === events.length ? settled : undefined;
  });
}
