/** A latency figure: how many samples and their percentiles, in ms (one decimal). */
export interface Stat {
  n: number;
  p50: number;
  p95: number;
  p99: number;
}

export function stat(samples: number[]): Stat {
  if (!samples.length) return { n: 0, p50: NaN, p95: NaN, p99: NaN };
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1));
  return { n: samples.length, p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}
