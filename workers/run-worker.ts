/** Builds and runs the worker: connects, registers search attributes, serves workflows and activities. */
import { makeDataDirPrivate } from '../infra/data-dir';
import type { Client, Connection } from '@temporalio/client';
import { Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { McpPool } from '../activities/mcp/pool';
import { CredentialService } from '../infra/credentials/service';
import { SANDBOX_FIX } from '../activities/tools/sandbox';
import { probeSandbox } from '../activities/tools/sandbox-probe';
import { closeInheritedDescriptorsOnce } from '../activities/tools/inherited-descriptors';
import type { AppConfig } from '../infra/config';
import type { Logger } from '../infra/log';
import { connectClient, connectWorker } from '../infra/temporal/connect';
import { registerSearchAttributesPatiently } from '../infra/temporal/search-attributes';
import type { StreamSink } from '../infra/stream-relay';
import { dataConverterFor } from '../infra/temporal/codec';
import { startTracing } from '../infra/telemetry';
import { copyFileSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { cachedWorkflowBundle, workflowCode } from './workflow-code';
import { activityHeartbeats } from '../activities/heartbeat';
import {
  buildIdOfBundle,
  currentVersion,
  promoteIfNew,
  versionKey,
  legacyWorkflows,
  type DeploymentVersion,
} from '../infra/temporal/deployment';
import { Drain } from './drain';
import { DrainMetrics } from './drain-metrics';
import { LegacyRecovery } from './legacy';

export interface RunningWorker {
  /** Resolves when the worker has stopped (after `shutdown()`, or on a fatal error, which it rethrows). */
  done: Promise<void>;
  shutdown(): Promise<void>;
  /** How shell commands run here: sandboxed, unsandboxed ("sandbox": "off"), or refused (and why). */
  shell: { kind: 'bwrap' } | { kind: 'off' } | { kind: 'unavailable'; reason: string };
}

/** The search attributes operators search by; a server that refuses is told about in the log, not fatal. */
async function registerAttributes(client: Client, namespace: string, log: Logger): Promise<void> {
  try {
    // Patiently: right after a fresh server's namespace job, the namespace is unknown for a few seconds.
    await registerSearchAttributesPatiently(client.connection as Connection, namespace, (m) => log.info(m));
  } catch (error) {
    log.warn(
      'could not register search attributes; register them yourself (docs/OPERATIONS.md lists names and types)',
      { error: (error as Error).message },
    );
  }
}

export async function startWorker(
  config: AppConfig,
  address: string,
  log: Logger,
  /** `npm start`: streamed answers go straight to the gateway in the same process. */
  extras: { stream?: StreamSink } = {},
): Promise<RunningWorker> {
  // First, before threads and connections open descriptors of their own: what the worker's starter left open
  // is not for the MCP servers and shell commands it starts (inherited-descriptors.ts).
  closeInheritedDescriptorsOnce();
  if (config.workerMetricsAddress) installMetricsRuntime(config.workerMetricsAddress, log);
  makeDataDirPrivate(config.dataDir, (message) => log.warn(message));
  const dataConverter = dataConverterFor(config.codec.payloadKey);
  const tracing = startTracing(config.tracing, 'worker');
  // What a start waits for, done at once rather than one after another (a restarted worker polls sooner):
  // the two connections, the sandbox probe and the workflow bundle (built once per version of the workflow
  // code and reused by every later start).
  const sandboxProbe = probeSandbox(config.policy.sandbox);
  const bundle = config.workflowBundlePath
    ? Promise.resolve(config.workflowBundlePath)
    : cachedWorkflowBundle(path.join(config.dataDir, 'workflow-bundles'), (message) => log.info(message));
  // Awaited below; a failure of either surfaces there, not as an unhandled rejection meanwhile.
  sandboxProbe.catch(() => {});
  bundle.catch(() => {});
  const [client, connection] = await Promise.all([
    connectClient(address, config.temporal.namespace, dataConverter, config.temporal, tracing?.client),
    connectWorker(address, config.temporal),
  ]);
  await registerAttributes(client, config.temporal.namespace, log);
  let credentials: CredentialService | undefined;
  const openCredentials = () => (credentials ??= CredentialService.fromConfig(config));
  // A shared vault (PostgreSQL) is reached and migrated at start: a wrong DATABASE_URL fails here, loudly.
  if (config.credentials.databaseUrl) await openCredentials().ready();
  // A server that is down is named in the log (and in each conversation that would use it), and retried with backoff.
  const mcp = new McpPool(config.policy.mcpServers, openCredentials, {
    log: (message, fields) => log.warn(message, fields as Record<string, unknown>),
    // Stdio servers under uids of their own, from the same table as the sandbox's (activities/mcp/server-uid.ts).
    isolation: { workdirsDir: path.join(config.dataDir, 'workdirs') },
  });
  const sandbox = await sandboxProbe;
  if (sandbox.kind === 'off')
    log.warn('"sandbox": "off" in the policy file: shell_execute commands run unsandboxed, as the worker');
  if (sandbox.kind === 'unavailable')
    log.warn(`shell_execute will refuse every command: ${sandbox.reason}; ${SANDBOX_FIX}`);
  const bundlePath = await bundle;
  const deployment = config.temporal.deployment;
  const version = deployment
    ? { deploymentName: deployment.name, buildId: buildIdOfBundle(bundlePath) }
    : undefined;
  const activities = createActivities({
    config,
    client,
    mcp,
    credentials: openCredentials,
    sandbox: Promise.resolve(sandbox),
    ...(extras.stream ? { stream: extras.stream } : {}),
  });
  /** A worker of `codePath`'s workflow code: this version's, or an earlier one's being drained. */
  const createWorker = (codePath: string, as: DeploymentVersion | undefined) =>
    Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      ...(dataConverter ? { dataConverter } : {}),
      activities,
      ...workflowCode(codePath, tracing),
      ...(as
        ? {
            workerDeploymentOptions: {
              version: as,
              useWorkerVersioning: true,
              // Every workflow type says so itself too (workflows/upgrade.ts explains the choice).
              defaultVersioningBehavior: 'PINNED' as const,
            },
          }
        : {}),
      ...(config.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: config.maxCachedWorkflows } : {}),
      stickyQueueScheduleToStartTimeout: config.stickyTimeoutMs,
      ...activityHeartbeats,
      // Workers shut down within this window; in-flight activities are then cancelled: read-only tool runs and
      // model calls are retried elsewhere, a tool run with side effects is reported as interrupted.
      shutdownGraceTime: '5s',
    });
  const worker = await createWorker(bundlePath, version);
  const running = worker.run();
  running.catch(() => {}); // awaited as `done` below
  const deploy = version
    ? await joinDeployment(config, client, version, bundlePath, createWorker, log)
    : undefined;
  if (config.email?.digestAt)
    void startEmailDigest(client, config.temporal.taskQueue, config.email.digestAt, log);
  log.info('worker started', {
    taskQueue: config.temporal.taskQueue,
    namespace: config.temporal.namespace,
    address,
    ...(version ? { version: versionKey(version) } : {}),
  });
  const done = running.finally(async () => {
    await deploy?.stop();
    // Open MCP connections (and stdio server processes) would keep the process alive after shutdown.
    await mcp.close();
    await credentials?.close();
    await connection.close();
    await client.connection.close();
    await tracing?.shutdown().catch(() => {});
  });
  return {
    done,
    shell: sandbox.kind === 'bwrap' ? { kind: 'bwrap' } : sandbox,
    async shutdown() {
      await deploy?.stop();
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}

/**
 * The worker's part in its Worker Deployment (docs/VERSIONING.md): 0.1's workflows are kept off today's code
 * (workers/legacy.ts) before this version may become current; a new version becomes current (unless promotion is
 * manual); then the drain sweep moves whatever runs on other versions onto this one.
 */
async function joinDeployment(
  config: AppConfig,
  client: Client,
  version: DeploymentVersion,
  bundlePath: string,
  createWorker: (codePath: string, as: DeploymentVersion) => Promise<Worker>,
  log: Logger,
): Promise<{ stop(): Promise<void> }> {
  const { namespace, taskQueue } = config.temporal;
  const bundlesDir = path.join(config.dataDir, 'workflow-bundles');
  keepBundle(bundlePath, bundlesDir, version.buildId);
  const legacy = new LegacyRecovery({
    client,
    namespace,
    taskQueue,
    deploymentName: version.deploymentName,
    bundlesDir,
    currentBundle: bundlePath,
    dataConverter: dataConverterFor(config.codec.payloadKey),
    startDrainWorker: createWorker,
    log,
  });
  const unversioned = await legacyWorkflows(client, taskQueue, version.deploymentName, undefined);
  // A server without Worker Deployments answers with an error here; promotion below says what to do about it.
  const current = await currentVersion(client, namespace, version.deploymentName).catch(() => undefined);
  await legacy.adopt(unversioned, current?.since);
  if (config.temporal.deployment?.promote === 'auto') {
    const outcome = await promoteIfNew(client, namespace, version, `worker@${process.pid}`).catch(
      (error: unknown) => {
        throw new Error(
          `could not make this worker's version current (${(error as Error).message}): the Temporal server must support Worker Deployments (1.28 or later; on a self-hosted server set the dynamic config system.enableDeploymentVersions and frontend.workerVersioningWorkflowAPIs to true), or set TEMPORAL_WORKER_VERSIONING=off (docs/VERSIONING.md)`,
          { cause: error },
        );
      },
    );
    if (outcome === 'promoted')
      log.info('this version is now the current one', { version: versionKey(version) });
    if (outcome === 'replaced before')
      log.warn(
        'this version was current before and was replaced: it serves only what is pinned to it (agentctl deploy promote makes it current again)',
        { version: versionKey(version) },
      );
  }
  const drain = new Drain({
    client,
    namespace,
    taskQueue,
    version,
    bundlesDir,
    ratePerSecond: config.drainRatePerSecond,
    identity: `worker@${process.pid}`,
    startDrainWorker: createWorker,
    legacy,
    metrics: new DrainMetrics(Runtime.instance().metricMeter),
    log,
  });
  drain.start(config.drainIntervalMs);
  return {
    async stop() {
      await drain.stop();
      await legacy.stop();
    },
  };
}

/**
 * A prebuilt bundle (WORKFLOW_BUNDLE_PATH, the image's) is kept in DATA_DIR too: when the next image replaces this
 * one, workflows still pinned to this version are drained from it (workers/drain.ts).
 */
function keepBundle(bundlePath: string, bundlesDir: string, buildId: string): void {
  if (path.resolve(path.dirname(bundlePath)) === path.resolve(bundlesDir)) return;
  const kept = path.join(bundlesDir, `workflows-${buildId}.js`);
  if (existsSync(kept)) return;
  mkdirSync(bundlesDir, { recursive: true });
  copyFileSync(bundlePath, `${kept}.${process.pid}.tmp`);
  renameSync(`${kept}.${process.pid}.tmp`, kept);
}

/**
 * The daily "Needs you" digest (EMAIL_DIGEST): one workflow per task queue, started by whichever worker starts first;
 * one already running is left as it is (it reads the hour again at each digest).
 */
async function startEmailDigest(client: Client, taskQueue: string, at: string, log: Logger): Promise<void> {
  try {
    await client.workflow.start('emailDigestWorkflow', {
      workflowId: `email-digest:${taskQueue}`,
      taskQueue,
      args: [{ at }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  } catch (error) {
    log.warn('the e-mail digest did not start; the next worker start tries again', {
      error: (error as Error).message,
    });
  }
}

let metricsInstalled = false;
/**
 * The SDK's runtime with a Prometheus exporter (WORKER_METRICS_ADDRESS): the SDK's worker metrics (task latencies,
 * slots, sticky cache, polls) and the product's own from workflows and activities, at /metrics on a port of its own,
 * never on the gateway's public listener. Installed once, before the worker's first connection creates the runtime.
 */
function installMetricsRuntime(bindAddress: string, log: Logger): void {
  if (metricsInstalled) return;
  metricsInstalled = true;
  try {
    Runtime.install({
      telemetryOptions: {
        metrics: { prometheus: { bindAddress, countersTotalSuffix: true, useSecondsForDurations: true } },
      },
    });
    log.info('worker metrics served', { address: `http://${bindAddress}/metrics` });
  } catch (error) {
    log.warn('worker metrics not served: the SDK runtime was already running', {
      error: (error as Error).message,
    });
  }
}
