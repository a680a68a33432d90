/**
 * Credentials connected (a sign-in, a pasted key) and disconnected are told to the person's directory workflow
 * (`user:<id>`, started if it is not running), which puts them in the audit trail (workflows/audit-trail.ts). The
 * credential stays in the vault: the signal names only the provider and what happened.
 *
 * The change itself is done when this runs (the vault has it): a Temporal that does not answer in time loses the
 * record, never the person's credential, and the log says so (`credential change not in the audit trail`).
 */
import type { Client } from '@temporalio/client';
import { userWorkflowId } from '../common/ids';
import type { Logger } from '../infra/log';
import { withinDeadline } from '../infra/temporal/deadline';
import { credentialChangeSignal, type CredentialChange } from '../workflows/user/contract';

const TELL_DEADLINE_MS = 5_000;

export type CredentialTrail = (userId: string, change: CredentialChange) => Promise<void>;

export function credentialTrail(client: Client, taskQueue: string, log: Logger): CredentialTrail {
  return async (userId, change) => {
    try {
      await withinDeadline(client, TELL_DEADLINE_MS, () =>
        client.workflow.signalWithStart('userDirectoryWorkflow', {
          workflowId: userWorkflowId(userId),
          taskQueue,
          args: [{ userId }],
          signal: credentialChangeSignal,
          signalArgs: [change],
        }),
      );
    } catch (error) {
      log.warn('credential change not in the audit trail', {
        userId,
        provider: change.provider,
        action: change.action,
        error: (error as Error).message,
      });
    }
  };
}
