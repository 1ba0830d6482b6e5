/**
 * A fixed log-bucket histogram for hot paths: recording is one `Math.log`
 * and one array increment, no allocation. Counts are cumulative, so the
 * collector copies them once per tick and a window's distribution is the
 * difference of two copies. Bucket `i` holds values up to `min * factor^i`;
 * with factor 1.2 a percentile is within about 10% of the true value.
 */
export class Histogram {
  readonly counts: Float64Array;
  private readonly logFactor: number;

  constructor(
    readonly min: number,
    readonly factor: number,
    buckets: number,
  ) {
    this.counts = new Float64Array(buckets);
    this.logFactor = Math.log(factor);
  }

  record(value: number): void {
    const i = value <= this.min ? 0 : Math.ceil(Math.log(value / this.min) / this.logFactor);
    this.counts[Math.min(i, this.counts.length - 1)]!++;
  }

  /** Upper bound of bucket `i`. */
  upper(i: number): number {
    return this.min * this.factor ** i;
  }

  /**
   * The `q` quantile (0..1) of the values recorded between two copies of
   * `counts` (`before` may be undefined for "since start"); 0 when none.
   * Interpolates linearly inside the bucket that holds the quantile.
   */
  quantile(after: Float64Array, before: Float64Array | undefined, q: number): number {
    let total = 0;
    for (let i = 0; i < after.length; i++) total += after[i]! - (before?.[i] ?? 0);
    if (total <= 0) return 0;
    const rank = q * total;
    let seen = 0;
    for (let i = 0; i < after.length; i++) {
      const n = after[i]! - (before?.[i] ?? 0);
      if (n <= 0) continue;
      if (seen + n >= rank) {
        const lower = i === 0 ? 0 : this.upper(i - 1);
        return lower + ((rank - seen) / n) * (this.upper(i) - lower);
      }
      seen += n;
    }
    return this.upper(after.length - 1);
  }
}

/** Milliseconds from 0.01 ms to about 90 s. */
export const latencyHistogram = () => new Histogram(0.01, 1.2, 90);
/** Batch sizes from 1 row to about 40 000 rows. */
export const countHistogram = () => new Histogram(1, 1.2, 60);
