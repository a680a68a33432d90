/** A person's daily model spending, kept in their directory workflow (`user:<id>`) across conversations. */
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import type { DaySpend } from '../common/budgets';
import { userWorkflowId } from '../common/ids';
import { personOf, type UsersTable } from '../common/identities';
import { recordSpendUpdate, type SpendRecord } from '../workflows/user/contract';

export type SpendRequest = SpendRecord & { userId: string };

/**
 * Adds usage (or an allowance) to the person's day and returns the day's total: an update with start, so the
 * directory is created on first use. The record's key is the update id, so a retried activity counts once.
 */
export async function recordSpend(
  client: Client,
  taskQueue: string,
  users: UsersTable,
  request: SpendRequest,
): Promise<DaySpend> {
  const { userId: id, ...record } = request;
  // One person, one daily budget: their Slack and Discord ids count where their web identity does.
  const userId = personOf(id, users);
  return await client.workflow.executeUpdateWithStart(recordSpendUpdate, {
    args: [record],
    updateId: `spend:${record.key}`,
    startWorkflowOperation: new WithStartWorkflowOperation('userDirectoryWorkflow', {
      workflowId: userWorkflowId(userId),
      taskQueue,
      args: [{ userId }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
}
