/** After a sign-in: signal every running workflow of that person waiting on that provider, and no other. */
import type { Client } from '@temporalio/client';
import { credentialWaitValue } from '../../common/search-attributes';
import { credentialProvidedSignal } from '../../workflows/session/contract';

export async function resumeWaitingWorkflows(
  client: Client,
  userId: string,
  provider: string,
): Promise<string[]> {
  // Values are ids we validated (user id pattern, provider name pattern): no quote can reach the query.
  // Only their own waits: a shared mission's run waits for its owner's sign-in, never anyone else's.
  const query = `AgentCredentialWaits = '${credentialWaitValue(userId, provider)}' AND ExecutionStatus = 'Running'`;
  const resumed: string[] = [];
  for await (const info of client.workflow.list({ query, pageSize: 100 })) {
    await client.workflow
      .getHandle(info.workflowId)
      .signal(credentialProvidedSignal, { provider, userId })
      .then(() => resumed.push(info.workflowId))
      .catch(() => {}); // it finished meanwhile: nothing left to resume
  }
  return resumed;
}
