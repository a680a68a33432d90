/**
 * Who may see and act in a web session: its owner (who started it) and the policy's approvers. Everyone
 * else gets 404, as if it did not exist. The owner is read from the workflow's own record (describe),
 * which the server answers even while no worker runs.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { PolicyFile } from '../../common/config';
import { aliasesOf } from '../../common/identities';
import { AgentOwner } from '../../common/search-attributes';

export type Access = 'allowed' | 'denied' | 'absent';

export class SessionAccess {
  private readonly approvers: Set<string>;

  constructor(
    private readonly client: Client,
    private readonly policy: PolicyFile,
  ) {
    this.approvers = new Set([
      ...policy.approvers,
      ...Object.values(policy.tools).flatMap((tool) => tool.approvers ?? []),
    ]);
  }

  isApprover(userId: string): boolean {
    return aliasesOf(userId, this.policy.users).some((id) => this.approvers.has(id));
  }

  async check(workflowId: string, userId: string): Promise<Access> {
    let owner: string | undefined;
    try {
      const description = await this.client.workflow.getHandle(workflowId).describe();
      owner = description.typedSearchAttributes.get(AgentOwner);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return 'absent';
      throw error;
    }
    if (owner !== undefined && aliasesOf(userId, this.policy.users).includes(owner)) return 'allowed';
    return this.isApprover(userId) ? 'allowed' : 'denied';
  }
}
