/**
 * `agentctl deploy ...`: the Worker Deployment as operators drive it (docs/VERSIONING.md). `status` shows every
 * version and what still runs on it; `promote` makes a version current (a rollout, or a rollback to an earlier
 * one); `drain` starts the drain onto the current version now: one batch signal per earlier version, sent by the
 * server at a pace (infra/temporal/drain-batch.ts). Nothing here lists workflows: versions are counted.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import {
  currentBuildId,
  legacyWorkflows,
  setCurrentVersion,
  unlessNotFound,
  versionsOf,
} from '../../infra/temporal/deployment';
import {
  countOnVersion,
  ensureDrain,
  newestDrain,
  type DrainProgress,
} from '../../infra/temporal/drain-batch';

interface Target {
  client: Client;
  namespace: string;
  taskQueue: string;
  deploymentName: string;
}

const STATUS = temporal.api.enums.v1.WorkerDeploymentVersionStatus;

function statusName(status: number | null | undefined): string {
  const name = STATUS[status ?? 0] ?? 'UNSPECIFIED';
  return name.replace('WORKER_DEPLOYMENT_VERSION_STATUS_', '').toLowerCase();
}

/** "3 min 20 s" for a wait in seconds. */
function duration(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  return minutes < 60 ? `${minutes} min ${Math.ceil(seconds % 60)} s` : `${(minutes / 60).toFixed(1)} h`;
}

/** The drain of one version as a line: moved, left, the pace, and the time to go at that pace. */
function drainLine(buildId: string, left: number, progress: DrainProgress | undefined): string | undefined {
  if (!progress)
    return left ? `  ${buildId}: no drain started yet (the current version's workers start it)` : undefined;
  const pace = progress.rate ? `, ${progress.rate.toFixed(1)}/s` : '';
  const togo = progress.rate && left ? `, about ${duration(left / progress.rate)} to go` : '';
  return `  ${buildId}: drain ${progress.state}, ${progress.signalled} of ${progress.total} asked to move${progress.failed ? ` (${progress.failed} failed)` : ''}, ${left} left${pace}${togo}`;
}

export async function deployStatus({
  client,
  namespace,
  taskQueue,
  deploymentName,
}: Target): Promise<string> {
  const reply = await unlessNotFound(
    client.workflowService.describeWorkerDeployment({ namespace, deploymentName }),
  );
  const versions = reply?.workerDeploymentInfo?.versionSummaries ?? [];
  if (!versions.length)
    return `deployment ${deploymentName}: no versioned worker has polled yet (TEMPORAL_WORKER_VERSIONING=off, or no worker started)\n`;
  const current = await currentBuildId(client, namespace, deploymentName);
  const rows = [['version', 'status', 'workflows left', 'created']];
  const drains: string[] = [];
  for (const version of versions) {
    const buildId = version.deploymentVersion?.buildId ?? '?';
    const created = version.createTime?.seconds
      ? new Date(Number(version.createTime.seconds) * 1000).toISOString()
      : '';
    // Counted, not listed: the cost is one count per version whatever is parked on it.
    const left =
      buildId === current
        ? 0
        : await countOnVersion(client, namespace, taskQueue, { deploymentName, buildId });
    rows.push([
      buildId,
      buildId === current ? 'current' : statusName(version.status),
      buildId === current ? '-' : String(left),
      created,
    ]);
    if (current && buildId !== current) {
      const progress = await newestDrain(client, namespace, {
        taskQueue,
        deploymentName,
        from: buildId,
        to: current,
      });
      const line = drainLine(buildId, left, progress);
      if (line) drains.push(line);
    }
  }
  const unversioned = (await legacyWorkflows(client, taskQueue, deploymentName, undefined)).length;
  if (unversioned) rows.push(['unversioned', '0.1 or versioning off', String(unversioned), '']);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  const drainText = drains.length ? `\ndrains onto ${current}:\n${drains.join('\n')}\n` : '';
  return `deployment ${deploymentName}\n${lines.join('\n')}\n${drainText}`;
}

export async function deployPromote(target: Target, buildId: string, identity: string): Promise<string> {
  const { client, namespace, deploymentName } = target;
  await setCurrentVersion(client, namespace, { deploymentName, buildId }, identity);
  return `version ${buildId} of ${deploymentName} is current: new workflows start on it, and its workers' drain sweep moves the others at their next safe point (agentctl deploy status shows what is left)\n`;
}

/** Starts the drain onto the current version now (the workers' sweep would at its next turn), at `ratePerSecond`. */
export async function deployDrain(target: Target, ratePerSecond: number, identity: string): Promise<string> {
  const { client, namespace, taskQueue, deploymentName } = target;
  const current = await currentBuildId(client, namespace, deploymentName);
  if (!current) throw new Error(`deployment ${deploymentName} has no current version: nothing to move onto`);
  const out: string[] = [];
  for (const buildId of await versionsOf(client, namespace, deploymentName)) {
    if (buildId === current) continue;
    const left = await countOnVersion(client, namespace, taskQueue, { deploymentName, buildId });
    if (!left) continue;
    const move = { taskQueue, deploymentName, from: buildId, to: current };
    const { progress, started } = await ensureDrain(client, namespace, move, {
      ratePerSecond,
      identity,
    });
    out.push(
      started === 'busy'
        ? `${buildId}: ${left} left; the namespace runs as many batch operations as it allows, try again shortly`
        : `${buildId}: ${left} left; ${started === 'started' ? 'drain started' : 'drain already running or done'} (${progress?.signalled ?? 0} of ${progress?.total ?? left} asked so far, at up to ${ratePerSecond}/s)`,
    );
  }
  if (!out.length) return `nothing runs on a version other than ${current}\n`;
  return `${out.join('\n')}\neach workflow continues as new onto ${current} at its next safe point (a run waiting on a sign-in stays until it is signed in); agentctl deploy status shows the progress\n`;
}
