/**
 * After a sign-in: signal every running workflow of that person waiting on that provider, and no other,
 * and tell the person on the outcome page what continues.
 */
import type { Client } from '@temporalio/client';
import { credentialWaitValue } from '../../common/search-attributes';
import type { Logger } from '../../infra/log';
import { withinDeadline } from '../../infra/temporal/deadline';
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

const RESUME_DEADLINE_MS = 5_000;

/**
 * The stored credential is the person's whatever happens next: resuming their waiting conversations is
 * best-effort here (the page says which), and the sweep (resume-sweep.ts) finishes what fails.
 */
export async function resumeAndDescribe(
  deps: { client: Client; log: Logger },
  userId: string,
  provider: string,
): Promise<string> {
  try {
    // Bounded: the person waits on this page; what is not resumed in time, the sweep resumes.
    const resumed = await withinDeadline(deps.client, RESUME_DEADLINE_MS, () =>
      resumeWaitingWorkflows(deps.client, userId, provider),
    );
    deps.log.info('oauth connected', { provider, userId, resumed: resumed.length });
    if (!resumed.length)
      return 'Nothing was waiting for it; the agent uses it from now on. You can close this tab.';
    return `It continues now in ${resumed.map(describeWorkflow).join(', ')}. You can close this tab.`;
  } catch (error) {
    deps.log.warn('resuming after a sign-in failed; the sweep retries', {
      provider,
      userId,
      error: (error as Error).message,
    });
    return 'The agent could not be reached just now: what waits for this account continues within a minute, by itself. You can close this tab.';
  }
}

/** A waiting workflow in words: a conversation, or a mission's run. */
function describeWorkflow(workflowId: string): string {
  const run = /^mission-run:[^:]+:(\d+)$/.exec(workflowId);
  if (run) return `a mission run (run ${run[1]})`;
  const [, channel] = workflowId.split(':');
  return `your ${channel === 'web' ? 'web' : channel === 'slack' ? 'Slack' : channel === 'discord' ? 'Discord' : ''} conversation`.replace(
    '  ',
    ' ',
  );
}
