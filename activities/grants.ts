/** Reading and writing a user's standing grants in their directory workflow (`user:<id>`). */
import {
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Grant } from '../common/grants';
import { userWorkflowId } from '../common/ids';
import { addGrantUpdate, grantsQuery } from '../workflows/user/contract';

export class UserGrants {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  async list(userId: string): Promise<Grant[]> {
    try {
      return await this.client.workflow.getHandle(userWorkflowId(userId)).query(grantsQuery);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return [];
      throw error;
    }
  }

  /** An update with start: the directory is created on first use, and the grant is stored before this returns. */
  async add(grant: Grant): Promise<void> {
    try {
      await this.addOnce(grant);
    } catch (error) {
      // The directory refused it (its limit, a malformed grant): the same write would be refused again.
      if (error instanceof WorkflowUpdateFailedError)
        throw ApplicationFailure.nonRetryable(
          `the user directory refused it: ${error.cause?.message ?? error.message}`,
          'GrantRejected',
        );
      throw error;
    }
  }

  private async addOnce(grant: Grant): Promise<void> {
    await this.client.workflow.executeUpdateWithStart(addGrantUpdate, {
      args: [grant],
      startWorkflowOperation: new WithStartWorkflowOperation('userDirectoryWorkflow', {
        workflowId: userWorkflowId(grant.userId),
        taskQueue: this.taskQueue,
        args: [{ userId: grant.userId }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
  }
}
