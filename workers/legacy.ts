/**
 * Conversations and missions that 0.1 started (before the 0.2 history epoch, docs/VERSIONING.md) are carried onto
 * today's code, with no step for the person who upgrades.
 *
 * 0.1 workers were unversioned, so their running workflows belong to no version, and the server would send their
 * next task to the current version: today's code, which cannot replay a 0.1 history (its patch markers are gone).
 * So, before this worker's version becomes current, each unversioned workflow whose history does not replay on
 * today's code is pinned to a worker of the frozen 0.1 workflow bundle (legacy/workflows-0.1.js.gz, built from
 * 0.1.0 at 50574548) run in this process. Then each is recovered onto today's code from its own state: a
 * conversation once it is idle or waiting on people (its transcript, grants, notices and open gates, the turn
 * resumed at those same gates, so the old buttons decide them), a mission once no run is in flight (its records and
 * settings), the mission directory of everyone at once (it hands each owner their records, as today's directories
 * are one per owner). Until then the 0.1 worker runs it as 0.1 did. Unversioned workflows that do replay (the
 * per-user directories) simply move to the current version at their next task.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import {
  AgentChannel,
  AgentMissionName,
  AgentMissionStatus,
  AgentOwner,
  AgentStatus,
} from '../common/search-attributes';
import type { Logger } from '../infra/log';
import {
  buildIdOfBundle,
  describeVersion,
  type DeploymentVersion,
  type PinnedWorkflow,
} from '../infra/temporal/deployment';
import { fireSignal, missionRecordsQuery, missionViewQuery } from '../workflows/missions/contract';
import { handOverToOwners } from '../infra/missions-directory';
import { stateQuery, type SessionInput } from '../workflows/session/contract';
import { atRest, carriedFromView, missionInputFromView } from './legacy-state';

const LEGACY_BUNDLE = path.resolve(__dirname, 'legacy/workflows-0.1.js.gz');

export interface LegacyOptions {
  client: Client;
  namespace: string;
  taskQueue: string;
  deploymentName: string;
  /** Where the 0.1 bundle is unpacked (DATA_DIR/workflow-bundles). */
  bundlesDir: string;
  /** Today's bundle: a history that replays on it needs nothing. */
  currentBundle: string;
  dataConverter: DataConverter | undefined;
  startDrainWorker: (bundlePath: string, version: DeploymentVersion) => Promise<Worker>;
  log: Logger;
}

export class LegacyRecovery {
  private worker: { worker: Worker; done: Promise<void> } | undefined;
  /** The 0.1 version: this deployment's name, the frozen bundle's digest. */
  readonly version: DeploymentVersion;
  private readonly bundle: string;
  /** Unversioned runs that replay on today's code: left to move by themselves. */
  private readonly replayable = new Set<string>();
  /** Runs on the 0.1 version (pinned here, or found pinned by an earlier start), by run id. */
  private readonly pinned = new Map<string, PinnedWorkflow>();

  constructor(private readonly options: LegacyOptions) {
    this.bundle = this.unpackedBundle();
    this.version = {
      deploymentName: options.deploymentName,
      buildId: `v0.1-${buildIdOfBundle(this.bundle)}`,
    };
  }

  get buildId(): string {
    return this.version.buildId;
  }

  /**
   * Pins every unversioned run that today's code cannot replay to the 0.1 worker. Call before promoting.
   * `currentSince`: when the deployment's current version became current. A run started since then was routed
   * to that version and is unversioned only until its first task: not 0.1's, and not worth a history fetch and a
   * replay (each start and each sweep would otherwise check every conversation caught starting).
   */
  async adopt(unversioned: PinnedWorkflow[], currentSince: Date | undefined): Promise<number> {
    const { client, log } = this.options;
    const fresh = unversioned.filter(
      (w) =>
        !this.replayable.has(w.runId) &&
        !this.pinned.has(w.runId) &&
        (!currentSince || w.startTime < currentSince),
    );
    if (!fresh.length) return 0;
    const legacy: PinnedWorkflow[] = [];
    const histories = fresh.map(async (workflow) => ({
      workflowId: workflow.workflowId,
      history: await client.workflow.getHandle(workflow.workflowId, workflow.runId).fetchHistory(),
    }));
    const replayOptions: ReplayWorkerOptions & { debugMode: false } = {
      workflowBundle: { codePath: this.options.currentBundle },
      ...(this.options.dataConverter ? { dataConverter: this.options.dataConverter } : {}),
      // In a workflow thread of its own, as a worker runs workflows. The SDK's replayer defaults to debug mode, which
      // runs the workflow code on this thread and leaves the SDK's promise hook and stack-trace handler installed
      // on it for good: every promise this process makes afterwards (activities, gRPC, the gateway's requests)
      // then pays for the SDK's per-promise stack capture.
      debugMode: false,
    };
    const results = Worker.runReplayHistories(
      replayOptions,
      (async function* () {
        for (const history of histories) yield await history;
      })(),
    );
    for await (const result of results) {
      const workflow = fresh.find((w) => w.workflowId === result.workflowId)!;
      if (result.error) legacy.push(workflow);
      else this.replayable.add(workflow.runId);
    }
    if (!legacy.length) return 0;
    await this.startWorker();
    for (const workflow of legacy) {
      await client.workflowService.updateWorkflowExecutionOptions({
        namespace: this.options.namespace,
        workflowExecution: { workflowId: workflow.workflowId, runId: workflow.runId },
        workflowExecutionOptions: {
          versioningOverride: {
            pinned: { behavior: 1 /* PINNED_OVERRIDE_BEHAVIOR_PINNED */, version: this.version },
          },
        },
        updateMask: { paths: ['versioning_override'] },
      });
      this.pinned.set(workflow.runId, workflow);
    }
    log.info('0.1 workflows kept on the 0.1 code until each is carried onto this version', {
      count: legacy.length,
    });
    return legacy.length;
  }

  /**
   * Carries each 0.1 run that is at rest onto today's code (`found`: runs visibility shows on the 0.1 version, after
   * a restart of this worker); stops the 0.1 worker once none is left.
   */
  async recover(found: PinnedWorkflow[] = []): Promise<number> {
    for (const workflow of found) this.pinned.set(workflow.runId, workflow);
    if (!this.pinned.size) return 0;
    await this.startWorker();
    let recovered = 0;
    for (const workflow of [...this.pinned.values()]) {
      try {
        const { status } = await this.options.client.workflow
          .getHandle(workflow.workflowId, workflow.runId)
          .describe();
        if (status.name !== 'RUNNING' || (await this.recoverOne(workflow))) {
          this.pinned.delete(workflow.runId);
          recovered++;
        }
      } catch (error) {
        this.options.log.warn('a 0.1 workflow could not be carried over yet; it stays on the 0.1 code', {
          workflowId: workflow.workflowId,
          error: (error as Error).message,
        });
      }
    }
    if (!this.pinned.size) await this.stop();
    return recovered;
  }

  async stop(): Promise<void> {
    if (!this.worker) return;
    const { worker, done } = this.worker;
    this.worker = undefined;
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await done.catch(() => {});
    this.options.log.info('no workflow runs on the 0.1 code any more: its worker stopped');
  }

  private async startWorker(): Promise<void> {
    if (this.worker) return;
    const worker = await this.options.startDrainWorker(this.bundle, this.version);
    this.worker = { worker, done: worker.run() };
    // A pin needs the version to exist on the server: it does once the worker has polled.
    const deadline = Date.now() + 60_000;
    while (!(await describeVersion(this.options.client, this.options.namespace, this.version))) {
      if (Date.now() > deadline)
        throw new Error('the 0.1 worker did not register with the server within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  private unpackedBundle(): string {
    const file = path.join(this.options.bundlesDir, 'legacy-0.1.js');
    if (existsSync(file)) return file;
    mkdirSync(this.options.bundlesDir, { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, gunzipSync(readFileSync(LEGACY_BUNDLE)));
    renameSync(partial, file);
    return file;
  }

  /**
   * Ends the 0.1 run and starts today's with what it holds. Terminated first, then read (a query of a closed run is
   * answered by the 0.1 worker): nothing the 0.1 code does after the read can be lost or done twice.
   */
  private async recoverOne(workflow: PinnedWorkflow): Promise<boolean> {
    const { client, log } = this.options;
    const handle = client.workflow.getHandle(workflow.workflowId, workflow.runId);
    if (workflow.type === 'sessionWorkflow') {
      const before = await handle.query(stateQuery);
      if (!atRest(before)) return false;
      await handle.terminate('0.1 conversation carried onto the current version (docs/VERSIONING.md)');
      const view = await handle.query(stateQuery);
      const input: SessionInput = {
        sessionId: view.sessionId,
        channel: view.channel as SessionInput['channel'],
        ownerId: view.ownerId,
        carried: carriedFromView(view),
      };
      await this.startFresh(workflow.workflowId, 'sessionWorkflow', input, [
        { key: AgentStatus, value: view.status },
        { key: AgentChannel, value: view.channel },
        { key: AgentOwner, value: view.ownerId },
      ]);
      log.info('a 0.1 conversation continues on this version', { workflowId: workflow.workflowId });
      return true;
    }
    if (workflow.type === 'missionWorkflow') {
      const before = await handle.query(missionViewQuery);
      if (before.running) return false; // its run finishes first (on the 0.1 code), then the mission moves
      await handle.terminate('0.1 mission carried onto the current version (docs/VERSIONING.md)');
      const view = await handle.query(missionViewQuery);
      // A fire that landed between the look and the end started a run the end cancels: it is fired again below.
      const firedMeanwhile = view.running !== null || view.runs.length > before.runs.length;
      await this.startFresh(workflow.workflowId, 'missionWorkflow', missionInputFromView(view), [
        { key: AgentOwner, value: view.ownerId },
        { key: AgentMissionName, value: view.name },
        { key: AgentMissionStatus, value: view.status },
      ]);
      if (firedMeanwhile)
        await client.workflow.getHandle(workflow.workflowId).signal(fireSignal, {
          by: view.ownerId,
          trigger: 'manual',
          context: 'fired again: the first fire landed while the mission moved to a new version',
        });
      log.info('a 0.1 mission continues on this version', { workflowId: workflow.workflowId });
      return true;
    }
    if (workflow.type === 'missionDirectoryWorkflow') {
      // Today's directory is one per owner: the 0.1 directory of everyone hands each owner their records and ends.
      await handle.terminate('0.1 mission directory handed to the owners (docs/VERSIONING.md)');
      const records = await handle.query(missionRecordsQuery);
      const owners = await handOverToOwners(client, this.options.taskQueue, records);
      log.info('the 0.1 mission directory handed to its owners', { missions: records.length, owners });
      return true;
    }
    return false; // a mission run finishes where it started
  }

  private async startFresh(
    workflowId: string,
    type: string,
    input: unknown,
    searchAttributes: { key: { name: string; type: string }; value: unknown }[],
  ): Promise<void> {
    try {
      await this.options.client.workflow.start(type, {
        workflowId,
        taskQueue: this.options.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'FAIL',
        typedSearchAttributes: searchAttributes as never,
      });
    } catch (error) {
      // A message arrived in between and started a run: it reads the 0.1 transcript itself (restore.ts).
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}
