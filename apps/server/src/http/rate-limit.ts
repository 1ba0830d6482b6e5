/**
 * Token buckets keyed by a string (an API key name, a uid): each key may take
 * `perMinute` requests a minute, in bursts of up to `perMinute`. The map is
 * bounded: past `maxKeys` the least recently used buckets are forgotten (a
 * forgotten bucket starts full again, which only ever favours the caller).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  /**
   * @param perMinute requests per minute per key (also the burst).
   * @param maxKeys most buckets kept at once.
   * @param now clock in ms (tests pass their own).
   */
  constructor(
    private readonly perMinute: number,
    private readonly maxKeys = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one request for `key`; returns 0 when allowed, else the seconds until one is. */
  take(key: string): number {
    const t = this.now();
    const ratePerMs = this.perMinute / 60_000;
    let b = this.buckets.get(key);
    if (b) {
      this.buckets.delete(key);
      b.tokens = Math.min(this.perMinute, b.tokens + (t - b.at) * ratePerMs);
      b.at = t;
    } else {
      b = { tokens: this.perMinute, at: t };
      if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    }
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / ratePerMs / 1000));
  }
}
