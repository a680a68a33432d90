/**
 * `agentctl deploy ...`: the Worker Deployment as operators drive it (docs/VERSIONING.md). `status` shows every
 * version and what still runs on it; `promote` makes a version current (a rollout, or a rollback to an earlier
 * one); `drain` asks every workflow on another version than the current one to move now.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import {
  currentBuildId,
  setCurrentVersion,
  unlessNotFound,
  workflowsOffVersion,
  type DeploymentVersion,
} from '../../infra/temporal/deployment';
import { upgradeSignal } from '../../workflows/upgrade';

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
  const reference: DeploymentVersion = { deploymentName, buildId: current ?? '' };
  const counts = new Map<string, number>();
  for (const workflow of await workflowsOffVersion(client, taskQueue, reference))
    counts.set(workflow.buildId ?? 'unversioned', (counts.get(workflow.buildId ?? 'unversioned') ?? 0) + 1);
  const rows = [['version', 'status', 'workflows left', 'created']];
  for (const version of versions) {
    const buildId = version.deploymentVersion?.buildId ?? '?';
    const created = version.createTime?.seconds
      ? new Date(Number(version.createTime.seconds) * 1000).toISOString()
      : '';
    rows.push([
      buildId,
      buildId === current ? 'current' : statusName(version.status),
      buildId === current ? '-' : String(counts.get(buildId) ?? 0),
      created,
    ]);
  }
  if (counts.get('unversioned'))
    rows.push(['unversioned', '0.1 or versioning off', String(counts.get('unversioned')), '']);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  return `deployment ${deploymentName}\n${lines.join('\n')}\n`;
}

export async function deployPromote(target: Target, buildId: string, identity: string): Promise<string> {
  const { client, namespace, deploymentName } = target;
  await setCurrentVersion(client, namespace, { deploymentName, buildId }, identity);
  return `version ${buildId} of ${deploymentName} is current: new workflows start on it, and its workers' drain sweep moves the others at their next safe point (agentctl deploy status shows what is left)\n`;
}

export async function deployDrain(target: Target): Promise<string> {
  const { client, namespace, taskQueue, deploymentName } = target;
  const current = await currentBuildId(client, namespace, deploymentName);
  if (!current) throw new Error(`deployment ${deploymentName} has no current version: nothing to move onto`);
  const off = await workflowsOffVersion(client, taskQueue, { deploymentName, buildId: current });
  let asked = 0;
  for (const workflow of off.filter((w) => w.buildId)) {
    await client.workflow.getHandle(workflow.workflowId, workflow.runId).signal(upgradeSignal);
    asked++;
  }
  return `asked ${asked} workflow(s) to move to ${current}; each continues as new at its next safe point (a run waiting on a sign-in stays until it is signed in)\n`;
}
