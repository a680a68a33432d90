/**
 * Per-person rate limits (token buckets), so one person cannot flood the agent or open sessions without
 * end. Kept per gateway process: with N gateways the ceiling is N times the rate, which still bounds a flood.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one token: undefined when allowed, else the seconds until the next one. */
  take(key: string): number | undefined {
    const now = this.now();
    const refill = this.perMinute / 60_000;
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * refill);
    bucket.at = now;
    if (this.buckets.size > 10_000) this.forgetFull(now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      this.buckets.set(key, bucket);
      return undefined;
    }
    this.buckets.set(key, bucket);
    return Math.max(1, Math.ceil((1 - bucket.tokens) / refill / 1000));
  }

  /** Buckets that have refilled completely carry no information: drop them. */
  private forgetFull(now: number): void {
    const fullAfter = 60_000;
    for (const [key, bucket] of this.buckets) if (now - bucket.at > fullAfter) this.buckets.delete(key);
  }
}
