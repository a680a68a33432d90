/** After a sign-in: signal every running workflow of that person waiting on that provider, and no other. */
import type { Client } from '@temporalio/client';
import { ANYONE, credentialWaitValue } from '../../common/search-attributes';
import { credentialProvidedSignal } from '../../workflows/session/contract';

export async function resumeWaitingWorkflows(
  client: Client,
  userId: string,
  provider: string,
): Promise<string[]> {
  // Values are ids we validated (user id pattern, provider name pattern): no quote can reach the query.
  // Their own waits, and shared missions' runs waiting for anyone's sign-in to this provider.
  const query = `AgentCredentialWaits IN ('${credentialWaitValue(userId, provider)}', '${credentialWaitValue(ANYONE, provider)}') AND ExecutionStatus = 'Running'`;
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
