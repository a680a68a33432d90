/** Builds and runs the worker: connects, registers search attributes, serves workflows and activities. */
import type { Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { McpPool } from '../activities/mcp/pool';
import { CredentialService } from '../infra/credentials/service';
import { SANDBOX_FIX } from '../activities/tools/sandbox';
import { probeSandbox } from '../activities/tools/sandbox-probe';
import { closeInheritedDescriptorsOnce } from '../activities/tools/inherited-descriptors';
import type { AppConfig } from '../infra/config';
import type { Logger } from '../infra/log';
import { connectClient, connectWorker } from '../infra/temporal/connect';
import { registerSearchAttributes } from '../infra/temporal/search-attributes';
import type { StreamSink } from '../infra/stream-relay';
import { dataConverterFor } from '../infra/temporal/codec';
import { startTracing } from '../infra/telemetry';
import path from 'node:path';
import { cachedWorkflowBundle, workflowCode } from './workflow-code';
import { activityHeartbeats } from '../activities/heartbeat';

export interface RunningWorker {
  /** Resolves when the worker has stopped (after `shutdown()`, or on a fatal error, which it rethrows). */
  done: Promise<void>;
  shutdown(): Promise<void>;
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
  try {
    await registerSearchAttributes(client.connection as Connection, config.temporal.namespace, (m) =>
      log.info(m),
    );
  } catch (error) {
    log.warn(
      'could not register search attributes; register them yourself (docs/OPERATIONS.md lists names and types)',
      {
        error: (error as Error).message,
      },
    );
  }
  let credentials: CredentialService | undefined;
  const openCredentials = () => (credentials ??= CredentialService.fromConfig(config));
  // A shared vault (PostgreSQL) is reached and migrated at start: a wrong DATABASE_URL fails here, loudly.
  if (config.credentials.databaseUrl) await openCredentials().ready();
  const mcp = new McpPool(config.policy.mcpServers, openCredentials);
  const sandbox = await sandboxProbe;
  if (sandbox.kind === 'off')
    log.warn('"sandbox": "off" in the policy file: shell_execute commands run unsandboxed, as the worker');
  if (sandbox.kind === 'unavailable')
    log.warn(`shell_execute will refuse every command: ${sandbox.reason}; ${SANDBOX_FIX}`);
  const bundlePath = await bundle;
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    ...(dataConverter ? { dataConverter } : {}),
    activities: createActivities({
      config,
      client,
      mcp,
      credentials: openCredentials,
      sandbox: Promise.resolve(sandbox),
      ...(extras.stream ? { stream: extras.stream } : {}),
    }),
    ...workflowCode(bundlePath, tracing),
    ...(config.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: config.maxCachedWorkflows } : {}),
    stickyQueueScheduleToStartTimeout: config.stickyTimeoutMs,
    ...activityHeartbeats,
    // Workers shut down within this window; in-flight activities are then cancelled: read-only tool runs and
    // model calls are retried elsewhere, a tool run with side effects is reported as interrupted.
    shutdownGraceTime: '5s',
  });
  log.info('worker started', {
    taskQueue: config.temporal.taskQueue,
    namespace: config.temporal.namespace,
    address,
  });
  const done = worker.run().finally(async () => {
    // Open MCP connections (and stdio server processes) would keep the process alive after shutdown.
    await mcp.close();
    await credentials?.close();
    await connection.close();
    await client.connection.close();
    await tracing?.shutdown().catch(() => {});
  });
  return {
    done,
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
