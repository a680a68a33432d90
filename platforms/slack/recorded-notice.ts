/**
 * A click or a dialog accepted while no worker runs (a deploy, a restart) is recorded, but nothing visible happens
 * until a worker is back and the workflow updates the prompt. So after a decision is signalled, the gateway asks the
 * conversation (a query, answered only by a worker) and, when none answers in time, tells the clicker privately
 * that their decision is recorded and will take effect. With a worker running, the prompt's own update says it.
 */
import { QueryNotRegisteredError, QueryRejectedError, WorkflowNotFoundError } from '@temporalio/client';
import type { SlackListenerContext } from './inbound-context';

/** Long enough for a worker to answer a query, short enough to say it within Slack's 3 seconds of the click. */
const WORKER_ANSWERS_WITHIN_MS = 1_500;

export const RECORDED_WITHOUT_WORKER =
  'Recorded. The agent did not answer just now (a deploy or a restart?): your click is checked when it is back, and the prompt then shows the outcome.';

export async function sayRecordedIfNoWorker(
  ctx: SlackListenerContext,
  decided: { workflowId: string; gateId: string; userId: string },
  say: (text: string) => Promise<unknown>,
): Promise<void> {
  try {
    await ctx.sessions.clickOutcome(
      decided.workflowId,
      { gateId: decided.gateId, userId: decided.userId, since: Date.now() },
      WORKER_ANSWERS_WITHIN_MS,
    );
  } catch (error) {
    // Silence (our timer or the server's deadline, whichever fires first, or a server that fails fast when no worker
    // polls) means no worker answered; a conversation that ended, or a query the workflow refused, says nothing here.
    if (
      error instanceof WorkflowNotFoundError ||
      error instanceof QueryRejectedError ||
      error instanceof QueryNotRegisteredError
    )
      return;
    await say(RECORDED_WITHOUT_WORKER).catch((failure: Error) =>
      ctx.log.warn('slack "recorded" notice not sent', { error: failure.message }),
    );
  }
}
