/**
 * The drain's progress as metrics (docs/OPERATIONS.md "Metrics"), on the worker's Prometheus endpoint beside the
 * SDK's: how many workflows still run on each earlier version, what the move's batch job has signalled, and how
 * the sweeps go. An alert (ops/prometheus/alerts.yml, AgentDrainStalled) fires when a version's count stops
 * falling. Labels: the earlier version's build id, a handful per deployment, never a workflow.
 */
import type { MetricMeter } from '@temporalio/common';

/** What a sweep found: workflows per earlier version, and each move's batch job as far as it has gone. */
export interface SweepFigures {
  waiting: Record<string, number>;
  drains: readonly { from: string; signalled: number }[];
}

export class DrainMetrics {
  private readonly waiting;
  private readonly signalled;
  private readonly sweeps;
  /** Versions reported before: one no longer waiting is set to 0, not left at its last count. */
  private readonly seen = new Set<string>();

  constructor(meter: MetricMeter) {
    this.waiting = meter.createGauge(
      'agent_drain_waiting',
      'int',
      'workflows',
      'Workflows still running on an earlier version, by its build id (0 once drained)',
    );
    this.signalled = meter.createGauge(
      'agent_drain_signalled',
      'int',
      'workflows',
      "Workflows the move's batch job has asked to move so far, by the earlier version's build id",
    );
    this.sweeps = meter.createCounter('agent_drain_sweeps', 'sweeps', 'Drain sweeps, by result (ok, failed)');
  }

  swept(report: SweepFigures): void {
    this.sweeps.add(1, { result: 'ok' });
    for (const [buildId, left] of Object.entries(report.waiting)) {
      this.seen.add(buildId);
      this.waiting.set(left, { build_id: buildId });
    }
    for (const buildId of this.seen)
      if (!Object.hasOwn(report.waiting, buildId)) this.waiting.set(0, { build_id: buildId });
    for (const drain of report.drains) this.signalled.set(drain.signalled, { build_id: drain.from });
  }

  failed(): void {
    this.sweeps.add(1, { result: 'failed' });
  }
}
