/**
 * The drain sweep (docs/VERSIONING.md): once this worker's version is current, every workflow still pinned to
 * another version is asked to move (the `upgrade` signal; it continues as new onto the current version at its next
 * safe point, carrying its open gates). A version whose bundle this machine kept (DATA_DIR/workflow-bundles, every
 * `npm start` upgrade) gets a drain worker in this process until none of its workflows is left, so a single-process
 * upgrade needs no old process. Versions with neither are told in the log: their own workers must run until they
 * drain (a fleet's rollout).
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { Logger } from '../infra/log';
import {
  buildIdOfBundle,
  currentVersion,
  legacyWorkflows,
  versionsOf,
  type DeploymentVersion,
} from '../infra/temporal/deployment';
import { countOnVersion, ensureDrain, type DrainProgress } from '../infra/temporal/drain-batch';
import type { DrainMetrics } from './drain-metrics';
import type { LegacyRecovery } from './legacy';

export interface DrainOptions {
  client: Client;
  namespace: string;
  taskQueue: string;
  /** This worker's version: the sweep runs only while it is the deployment's current version. */
  version: DeploymentVersion;
  /** Kept bundles of earlier versions (cachedWorkflowBundle keeps them until their version has drained). */
  bundlesDir: string;
  /** The drain's pace: signals a second the server sends (`WORKER_DRAIN_RATE`). */
  ratePerSecond: number;
  /** Who starts the drain, as the batch job records it. */
  identity?: string;
  /** Starts (and runs) a worker of an earlier version from its bundle. */
  startDrainWorker: (bundlePath: string, version: DeploymentVersion) => Promise<Worker>;
  /** 0.1's workflows (unversioned, then pinned to the frozen 0.1 bundle): workers/legacy.ts. */
  legacy?: LegacyRecovery;
  /** The sweep's figures on the worker's metrics endpoint. */
  metrics?: DrainMetrics;
  log: Logger;
}

export interface SweepReport {
  /** Workflows per other version (build id; `unversioned` for none). */
  waiting: Record<string, number>;
  /** The batch jobs moving them, as the server reports them, with the version each moves from. */
  drains: (DrainProgress & { from: string })[];
  drainWorkers: string[];
}

export class Drain {
  private readonly workers = new Map<string, { worker: Worker; done: Promise<void>; bundle: string }>();
  private readonly bundleIds = new Map<string, string>();
  private readonly toldMissing = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<SweepReport> | undefined;
  private stopped = false;

  constructor(private readonly options: DrainOptions) {}

  /** Sweeps now and then every `intervalMs`, until `stop()`. */
  start(intervalMs: number): void {
    const tick = () => {
      void this.sweep()
        .catch((error: unknown) =>
          this.options.log.warn('drain sweep failed; trying again later', {
            error: (error as Error).message,
          }),
        )
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, intervalMs);
        });
    };
    tick();
  }

  /** One sweep; concurrent callers share it. */
  sweep(): Promise<SweepReport> {
    this.sweeping ??= this.sweepOnce()
      .catch((error: unknown) => {
        this.options.metrics?.failed();
        throw error;
      })
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.sweeping?.catch(() => {});
    for (const { worker, done } of this.workers.values()) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done.catch(() => {});
    }
    this.workers.clear();
  }

  private async sweepOnce(): Promise<SweepReport> {
    const { client, namespace, taskQueue, version, log } = this.options;
    const report: SweepReport = { waiting: {}, drains: [], drainWorkers: [] };
    const current = await currentVersion(client, namespace, version.deploymentName);
    if (current?.buildId !== version.buildId) return report;
    const { legacy } = this.options;
    // 0.1's runs (unversioned, or pinned to its frozen bundle) are listed: a one-time move, and they are few.
    const legacyRuns = await legacyWorkflows(client, taskQueue, version.deploymentName, legacy?.buildId);
    const unversioned = legacyRuns.filter((workflow) => workflow.buildId === undefined);
    if (unversioned.length) report.waiting.unversioned = unversioned.length;
    if (unversioned.length) await legacy?.adopt(unversioned, current.since);
    if (legacy) {
      const pinned = legacyRuns.filter((workflow) => workflow.buildId === legacy.buildId);
      if (pinned.length) report.waiting[legacy.buildId] = pinned.length;
      await legacy.recover(pinned);
    }

    // Every other version: counted, drained by one batch job per move (whichever worker starts it first), and run
    // by a drain worker of its kept bundle where this machine has it.
    for (const buildId of await versionsOf(client, namespace, version.deploymentName)) {
      if (buildId === version.buildId || buildId === legacy?.buildId) continue;
      const old = { deploymentName: version.deploymentName, buildId };
      const left = await countOnVersion(client, namespace, taskQueue, old);
      if (!left) continue;
      report.waiting[buildId] = left;
      if (!this.workers.has(buildId)) {
        const bundle = this.keptBundle(buildId);
        if (bundle) {
          const worker = await this.options.startDrainWorker(bundle, old);
          this.workers.set(buildId, { worker, done: worker.run(), bundle });
          log.info('draining an earlier version in this process', { buildId, workflows: left });
        } else if (!this.toldMissing.has(buildId)) {
          this.toldMissing.add(buildId);
          log.warn(
            `${left} workflow(s) are pinned to version ${buildId}, whose bundle this worker does not have: keep a worker of that version running until they move (agentctl deploy status)`,
          );
        }
      }
      const move = { taskQueue, deploymentName: version.deploymentName, from: buildId, to: version.buildId };
      const { progress, started } = await ensureDrain(client, namespace, move, {
        ratePerSecond: this.options.ratePerSecond,
        identity: this.options.identity ?? 'agent-worker',
      });
      if (started === 'started')
        log.info(
          'drain started: the server signals each workflow on the earlier version once, at the set pace',
          {
            from: buildId,
            to: version.buildId,
            workflows: left,
            perSecond: this.options.ratePerSecond,
          },
        );
      if (progress) report.drains.push({ ...progress, from: buildId });
    }
    // Told before any drain worker stops: stopping one waits for its work, and the figures should not.
    this.options.metrics?.swept(report);
    const byVersion = new Map(Object.entries(report.waiting));
    // A drain worker whose version has nothing left stops, and its bundle goes.
    for (const [buildId, drainer] of this.workers) {
      if (byVersion.has(buildId)) continue;
      if (drainer.worker.getState() === 'RUNNING') drainer.worker.shutdown();
      await drainer.done.catch(() => {});
      this.workers.delete(buildId);
      rmSync(drainer.bundle, { force: true });
      log.info('an earlier version has drained: its worker stopped and its bundle was removed', { buildId });
    }
    this.removeDrainedBundles(new Set([version.buildId, ...byVersion.keys()]));
    report.drainWorkers = [...this.workers.keys()];
    return report;
  }

  /** Kept bundles of versions that no running workflow needs any more (the sweep runs only on the current one). */
  private removeDrainedBundles(needed: Set<string>): void {
    const dir = this.options.bundlesDir;
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      if (!/^workflows-[0-9a-f]+\.js$/.test(name)) continue;
      const file = path.join(dir, name);
      const id = this.bundleIds.get(file) ?? buildIdOfBundle(file);
      this.bundleIds.set(file, id);
      if (needed.has(id)) continue;
      rmSync(file, { force: true });
      this.bundleIds.delete(file);
    }
  }

  /** The kept bundle of `buildId` in the bundles folder, if this machine ran that version. */
  private keptBundle(buildId: string): string | undefined {
    const dir = this.options.bundlesDir;
    if (!existsSync(dir)) return undefined;
    for (const name of readdirSync(dir)) {
      if (!/^workflows-[0-9a-f]+\.js$/.test(name)) continue;
      const file = path.join(dir, name);
      let id = this.bundleIds.get(file);
      if (!id) this.bundleIds.set(file, (id = buildIdOfBundle(file)));
      if (id === buildId) return file;
    }
    return undefined;
  }
}
