/**
 * Sign-ins resume their waiting conversations durably. The callback signals them at once (resume.ts); when that
 * fails (Temporal unreachable for a moment, the gateway stopped right after storing the token), nothing is lost:
 * this sweep, in every gateway, looks at the conversations still waiting on a credential and resumes those whose
 * person has stored it since the wait began. Its state is the vault and the search attributes, so it survives
 * restarts of anything. A credential older than the wait (one that stopped working) resumes nothing.
 */
import type { Client } from '@temporalio/client';
import { AgentCredentialWaits } from '../../common/search-attributes';
import type { CredentialService } from '../../infra/credentials/service';
import type { Logger } from '../../infra/log';
import { withinDeadline } from '../../infra/temporal/deadline';
import { credentialProvidedSignal, pendingGatesQuery } from '../../workflows/session/contract';

export const RESUME_SWEEP_INTERVAL_MS = 30_000;
/** Each call of a sweep: a server that does not answer ends this sweep, and the next one tries again. */
const CALL_DEADLINE_MS = 10_000;

/** `user:provider` as AgentCredentialWaits holds it (neither part has a colon). */
function parseWait(value: string): { userId: string; provider: string } | undefined {
  const cut = value.lastIndexOf(':');
  return cut > 0 ? { userId: value.slice(0, cut), provider: value.slice(cut + 1) } : undefined;
}

/** One sweep: returns the workflows it resumed. */
export async function sweepCredentialWaits(
  client: Client,
  credentials: CredentialService,
): Promise<string[]> {
  const resumed: string[] = [];
  // One vault read per person per sweep, however many of their conversations wait.
  const stored = new Map<string, Promise<{ provider: string; updatedAt: number }[]>>();
  const connected = (userId: string) => {
    let reading = stored.get(userId);
    if (!reading) stored.set(userId, (reading = credentials.vault.connected(userId)));
    return reading;
  };
  const query = `${AgentCredentialWaits.name} IS NOT NULL AND ExecutionStatus = 'Running'`;
  for await (const info of client.workflow.list({ query, pageSize: 100 })) {
    const waits = (info.typedSearchAttributes.get(AgentCredentialWaits) ?? []).flatMap(
      (v) => parseWait(v) ?? [],
    );
    for (const { userId, provider } of waits) {
      const credential = (await connected(userId)).find((c) => c.provider === provider);
      if (!credential) continue;
      const handle = client.workflow.getHandle(info.workflowId);
      const gates = await withinDeadline(client, CALL_DEADLINE_MS, () =>
        handle.query(pendingGatesQuery),
      ).catch(() => []);
      const waiting = gates.some(
        (g) =>
          g.kind === 'credential' &&
          g.provider === provider &&
          g.requesterId === userId &&
          g.createdAt < credential.updatedAt,
      );
      if (!waiting) continue;
      await withinDeadline(client, CALL_DEADLINE_MS, () =>
        handle.signal(credentialProvidedSignal, { provider, userId }),
      );
      resumed.push(info.workflowId);
    }
  }
  return resumed;
}

/** Runs the sweep every `intervalMs` until stopped; a failed sweep is logged and tried again next time. */
export function startResumeSweep(
  client: Client,
  credentials: () => CredentialService,
  log: Logger,
  intervalMs = RESUME_SWEEP_INTERVAL_MS,
): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sweepCredentialWaits(client, credentials())
      .then((resumed) => {
        if (resumed.length) log.info('sign-ins resumed by the sweep', { workflows: resumed });
      })
      .catch((error: unknown) => log.warn('credential sweep failed', { error: (error as Error).message }))
      .finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
