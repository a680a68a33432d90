/**
 * Counters of the dev server's Prometheus endpoint summed by operation: what a run asked of the server
 * (`service_requests`: API calls; `persistence_requests`: database operations, which a SQLite-backed dev server
 * does one at a time).
 */
export async function countersByOperation(metricsUrl: string, metric: string): Promise<Map<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const totals = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue;
    const operation = /operation="([^"]+)"/.exec(line)?.[1] ?? '?';
    totals.set(operation, (totals.get(operation) ?? 0) + Number(line.split(' ').pop()));
  }
  return totals;
}

/** What happened between two readings, per unit of work (e.g. per resume), largest first. */
export function perUnit(
  before: Map<string, number>,
  after: Map<string, number>,
  units: number,
): { total: number; top: Record<string, number> } {
  const rows = [...after]
    .map(([operation, value]) => [operation, (value - (before.get(operation) ?? 0)) / units] as const)
    .filter(([, value]) => value > 0)
    .sort((a, b) => b[1] - a[1]);
  const round = (n: number) => Number(n.toFixed(2));
  return {
    total: round(rows.reduce((sum, [, value]) => sum + value, 0)),
    top: Object.fromEntries(rows.slice(0, 16).map(([operation, value]) => [operation, round(value)])),
  };
}
