/**
 * The daily digest of "Needs you" by e-mail (EMAIL_DIGEST, off by default): one workflow per task queue
 * (`email-digest:<task queue>`) sleeps until the hour set, has `mailDigests` mail each person with an address what
 * waits on them (their own waiting gates, found by their ids: nothing reads everyone's), and sleeps again. A deploy
 * moves it like any long-lived workflow (the upgrade signal, then continue-as-new onto the current version).
 */
import * as wf from '@temporalio/workflow';
import type { createActivities } from '../../activities';
import { continueOnCurrentVersion, listenForUpgrade, timeToContinue, upgradeRequested } from '../upgrade';

type Activities = ReturnType<typeof createActivities>;

const { mailDigests } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: {
    initialInterval: '30 seconds',
    backoffCoefficient: 2,
    maximumInterval: '10 minutes',
    maximumAttempts: 6,
  },
});

export interface DigestInput {
  /** The hour it is sent, `HH:MM` UTC. */
  at: string;
}

/** The next `HH:MM` UTC after `now`. */
export function nextDigestAt(at: string, now: number): number {
  const [hours, minutes] = at.split(':').map(Number) as [number, number];
  const day = new Date(now);
  const next = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), hours, minutes);
  return next > now ? next : next + 24 * 3_600_000;
}

export async function emailDigestWorkflow(input: DigestInput): Promise<void> {
  listenForUpgrade();
  let at = input.at;
  for (;;) {
    const due = nextDigestAt(at, Date.now());
    const moved = await wf.condition(upgradeRequested, due - Date.now());
    if (moved || timeToContinue(2_000))
      return await continueOnCurrentVersion<typeof emailDigestWorkflow>({ at });
    // The hour of the next one is what the worker's configuration says now (EMAIL_DIGEST may have changed).
    const sent = await mailDigests().catch((error: unknown) => {
      wf.log.warn('the e-mail digest failed', { error: String(error) });
      return undefined;
    });
    // Turned off meanwhile (EMAIL_DIGEST unset): this workflow ends; a worker started with it on starts it again.
    if (sent?.off) return;
    if (sent?.at) at = sent.at;
  }
}
