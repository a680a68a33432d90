/**
 * Who may see and act in a web session: its owner (who started it) and the policy's approvers. Everyone
 * else gets 404, as if it did not exist. The owner is read from the workflow's own record (describe),
 * which the server answers even while no worker runs.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { PolicyFile } from '../../infra/config';
import { aliasesOf } from '../../common/identities';
import { AgentOwner } from '../../common/search-attributes';
import { withinDeadline } from '../../infra/temporal/deadline';
import { WEB_DEADLINE_MS } from '../sessions';

export type Access = 'allowed' | 'denied' | 'absent';

/**
 * Owners remembered per gateway: a running session's owner never changes, so a click needs no lookup after
 * the first. Bounded in size, and in time for the rare id that is deleted by retention and started again.
 */
const OWNER_CACHE_SIZE = 10_000;
const OWNER_CACHE_MS = 10 * 60_000;

export class SessionAccess {
  private readonly approvers: Set<string>;
  private readonly owners = new Map<string, { owner: string; at: number }>();

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
    const owner = await this.ownerOf(workflowId);
    if (owner === null) return 'absent';
    if (owner !== undefined && this.idsOf(userId).includes(owner)) return 'allowed';
    return this.isApprover(userId) ? 'allowed' : 'denied';
  }

  /** Every id this person has (web, Slack, Discord), by the policy's users table. */
  idsOf(userId: string): string[] {
    return aliasesOf(userId, this.policy.users);
  }

  /** The workflow's owner (AgentOwner); null when no such workflow exists, undefined when it names none. */
  async ownerOf(workflowId: string): Promise<string | null | undefined> {
    const cached = this.owners.get(workflowId);
    if (cached && Date.now() - cached.at < OWNER_CACHE_MS) return cached.owner;
    let owner: string | undefined;
    try {
      const description = await withinDeadline(this.client, WEB_DEADLINE_MS, () =>
        this.client.workflow.getHandle(workflowId).describe(),
      );
      owner = description.typedSearchAttributes.get(AgentOwner);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return null;
      throw error;
    }
    if (owner !== undefined) this.remember(workflowId, owner);
    return owner;
  }

  private remember(workflowId: string, owner: string): void {
    if (this.owners.size >= OWNER_CACHE_SIZE) this.owners.delete(this.owners.keys().next().value!);
    this.owners.set(workflowId, { owner, at: Date.now() });
  }
}
