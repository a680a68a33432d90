/**
 * The chaos suite's scoreboard: each scenario records how many runs it made, how many ended as expected,
 * and how many messages or tool results were lost; the global teardown prints the table after the run.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';

export const SUMMARY_FILE = path.resolve(__dirname, '../artifacts/chaos-summary.jsonl');

export interface ChaosOutcome {
  scenario: string;
  runs: number;
  passed: number;
  lost: number;
}

export function recordChaos(outcome: ChaosOutcome): void {
  mkdirSync(path.dirname(SUMMARY_FILE), { recursive: true });
  appendFileSync(SUMMARY_FILE, `${JSON.stringify(outcome)}\n`);
}

/**
 * How many times a repeated chaos scenario runs: `npm run chaos` runs each at strength (CHAOS_RUNS, 20 unless
 * set); a plain test run (CI, `npm test`) a few times.
 */
export function chaosRuns(): number {
  const runs = Number(process.env.CHAOS_RUNS ?? 3);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(
      `CHAOS_RUNS is "${process.env.CHAOS_RUNS}": set a whole number of runs, e.g. CHAOS_RUNS=20`,
    );
  return runs;
}

/** Runs a scenario's checks and records the outcome whether they pass or not. */
export async function scenario(
  name: string,
  runs: number,
  body: () => Promise<{ passed: number; lost: number }>,
): Promise<void> {
  let outcome = { passed: 0, lost: -1 };
  try {
    outcome = await body();
  } finally {
    recordChaos({ scenario: name, runs, ...outcome });
  }
}

/**
 * Counts a scenario's runs as its checks are made, so the scoreboard shows what happened rather than what was
 * hoped: `finish` records the row (also when checks failed) and then fails the test with the first failures.
 */
export class Tally {
  runs = 0;
  failed = 0;
  lost = 0;
  private readonly examples: string[] = [];

  check(ok: boolean, what: () => string): void {
    this.runs++;
    if (ok) return;
    this.failed++;
    if (this.examples.length < 10) this.examples.push(what());
  }

  /** One attack attempt: refused, or it got through (a failed run, and counted as lost). */
  attempt(refused: boolean, what: () => string): void {
    this.check(refused, what);
    if (!refused) this.lost++;
  }

  finish(scenario: string): void {
    recordChaos({ scenario, runs: this.runs, passed: this.runs - this.failed, lost: this.lost });
    if (this.failed || this.lost)
      throw new Error(
        `${scenario}: ${this.failed} of ${this.runs} runs failed, ${this.lost} lost; first failures:\n${this.examples.join('\n')}`,
      );
  }
}

export function formatSummary(outcomes: ChaosOutcome[]): string {
  const rows = [
    ['scenario', 'runs', 'passed', 'lost'],
    ...outcomes.map((o) => [o.scenario, String(o.runs), String(o.passed), o.lost < 0 ? '?' : String(o.lost)]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}
