/**
 * The worker's Worker Deployment (docs/VERSIONING.md): its version is the digest of the workflow bundle it runs, a
 * new version makes itself current once (unless promotion is manual), and the sweep finds the workflows still
 * pinned to other versions.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';

export interface DeploymentVersion {
  deploymentName: string;
  buildId: string;
}

/** How bundleWorkflows starts a bundle (workers/workflow-code.ts `workflowCodeMarker`). */
const WORKFLOW_CODE_MARKER = /^\/\* workflow-code ([0-9a-f]{16}) \*\//;

/**
 * The build id of a workflow bundle: the digest of what it is made of, which it names at its start (the
 * workflow sources by their paths inside the checkout, the packages they import), so the same commit checked out
 * at two paths (two hosts of a fleet, a redeploy into a new directory) is one version; webpack's output itself
 * names files by their absolute paths. A bundle without that line (0.1's, or one kept from before) keeps the
 * digest of its bytes it always had.
 */
export function buildIdOfBundle(bundlePath: string): string {
  const code = readFileSync(bundlePath);
  const named = WORKFLOW_CODE_MARKER.exec(code.subarray(0, 64).toString('utf8'));
  return named ? named[1]! : createHash('sha256').update(code).digest('hex').slice(0, 16);
}

/** As visibility stores it in `TemporalWorkerDeploymentVersion`. */
export const versionKey = (version: DeploymentVersion) => `${version.deploymentName}:${version.buildId}`;

/** A string as a visibility query's literal. */
export const quoted = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

type VersionInfo = temporal.api.deployment.v1.IWorkerDeploymentVersionInfo;

/** The reply, or undefined for NOT_FOUND: no worker of that deployment (or version) has polled yet. */
export async function unlessNotFound<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if ((error as { code?: number }).code === 5) return undefined;
    throw error;
  }
}

export async function describeVersion(
  client: Client,
  namespace: string,
  version: DeploymentVersion,
): Promise<VersionInfo | undefined> {
  const reply = await unlessNotFound(
    client.workflowService.describeWorkerDeploymentVersion({ namespace, deploymentVersion: version }),
  );
  return reply?.workerDeploymentVersionInfo ?? undefined;
}

/** The deployment's current version's build id (undefined: none yet, unversioned workers get new workflows). */
export async function currentBuildId(
  client: Client,
  namespace: string,
  deploymentName: string,
): Promise<string | undefined> {
  return (await currentVersion(client, namespace, deploymentName))?.buildId;
}

/**
 * The deployment's current version and since when it is (`since` undefined where the server does not say). Every
 * workflow started after `since` is routed to it: one still unversioned has only not had its first task yet.
 */
export async function currentVersion(
  client: Client,
  namespace: string,
  deploymentName: string,
): Promise<{ buildId: string; since: Date | undefined } | undefined> {
  const reply = await unlessNotFound(
    client.workflowService.describeWorkerDeployment({ namespace, deploymentName }),
  );
  const routing = reply?.workerDeploymentInfo?.routingConfig;
  const buildId = routing?.currentDeploymentVersion?.buildId;
  if (!buildId) return undefined;
  return { buildId, since: optionalTsToDate(routing.currentVersionChangedTime) };
}

export async function setCurrentVersion(
  client: Client,
  namespace: string,
  version: DeploymentVersion,
  identity: string,
): Promise<void> {
  await client.workflowService.setWorkerDeploymentCurrentVersion({
    namespace,
    deploymentName: version.deploymentName,
    buildId: version.buildId,
    identity,
  });
}

/**
 * Makes `version` current if it never was current or ramping (a brand-new build). A version that was current before
 * and was replaced (a newer deploy, or an operator's rollback) does not take over again when one of its workers
 * restarts: going back is an operator's decision (`agentctl deploy promote`). Waits until the server has seen
 * this version's pollers (the worker must be running).
 */
export async function promoteIfNew(
  client: Client,
  namespace: string,
  version: DeploymentVersion,
  identity: string,
  timeoutMs = 60_000,
): Promise<'promoted' | 'already current' | 'replaced before'> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = await describeVersion(client, namespace, version);
    if (
      info?.status ===
      temporal.api.enums.v1.WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT
    )
      return 'already current';
    if (info?.firstActivationTime) return 'replaced before';
    if (info) {
      try {
        await setCurrentVersion(client, namespace, version, identity);
        return 'promoted';
      } catch (error) {
        if (Date.now() > deadline) throw error;
      }
    } else if (Date.now() > deadline) {
      throw new Error(
        `the server has not seen this worker's version ${versionKey(version)} within ${timeoutMs / 1000} s`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export interface PinnedWorkflow {
  workflowId: string;
  runId: string;
  type: string;
  buildId: string | undefined;
  startTime: Date;
}

/**
 * Running workflows of this deployment's task queue on a version other than `buildId` (or on none: started by an
 * unversioned worker, such as every 0.1 install's). Lists them all: for tests and checks of a few; the product counts
 * per version instead (drain-batch.ts).
 */
export async function workflowsOffVersion(
  client: Client,
  taskQueue: string,
  version: DeploymentVersion,
): Promise<PinnedWorkflow[]> {
  const query = [
    `ExecutionStatus = 'Running'`,
    `TaskQueue = ${quoted(taskQueue)}`,
    `(TemporalWorkerDeploymentVersion IS NULL OR TemporalWorkerDeploymentVersion != ${quoted(versionKey(version))})`,
  ].join(' AND ');
  return await listPinned(client, query, version.deploymentName);
}

/** The build ids of every version the deployment knows (from the server's own summary; no workflow is listed). */
export async function versionsOf(
  client: Client,
  namespace: string,
  deploymentName: string,
): Promise<string[]> {
  const reply = await unlessNotFound(
    client.workflowService.describeWorkerDeployment({ namespace, deploymentName }),
  );
  return (reply?.workerDeploymentInfo?.versionSummaries ?? []).flatMap(
    (summary) => summary.deploymentVersion?.buildId ?? [],
  );
}

/**
 * 0.1's running workflows: unversioned (started by 0.1's unversioned workers) or pinned to its frozen bundle's
 * version. Listed, since each is moved by hand (workers/legacy.ts); a one-time set that only shrinks.
 */
export async function legacyWorkflows(
  client: Client,
  taskQueue: string,
  deploymentName: string,
  legacyBuildId: string | undefined,
): Promise<PinnedWorkflow[]> {
  const onLegacy = legacyBuildId
    ? ` OR TemporalWorkerDeploymentVersion = ${quoted(versionKey({ deploymentName, buildId: legacyBuildId }))}`
    : '';
  const query = `ExecutionStatus = 'Running' AND TaskQueue = ${quoted(taskQueue)} AND (TemporalWorkerDeploymentVersion IS NULL${onLegacy})`;
  return await listPinned(client, query, deploymentName);
}

/** The running workflows a query finds, with the version each is pinned to. */
async function listPinned(client: Client, query: string, deploymentName: string): Promise<PinnedWorkflow[]> {
  const found: PinnedWorkflow[] = [];
  for await (const execution of client.workflow.list({ query, pageSize: 500 })) {
    // Listing does not fill in versioningInfo: the version is read from the search attribute visibility keeps.
    const [pinned] = (execution.searchAttributes?.TemporalWorkerDeploymentVersion ?? []) as unknown[];
    found.push({
      workflowId: execution.workflowId,
      runId: execution.runId,
      type: execution.type,
      buildId: typeof pinned === 'string' ? buildIdIn(pinned, deploymentName) : undefined,
      startTime: execution.startTime,
    });
  }
  return found;
}

/** `name:build` (or the older `name.build`) as visibility stores a version; another deployment's stays whole. */
export function buildIdIn(stored: string, deploymentName: string): string {
  for (const separator of [':', '.'])
    if (stored.startsWith(`${deploymentName}${separator}`)) return stored.slice(deploymentName.length + 1);
  return stored;
}
