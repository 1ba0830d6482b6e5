/** Latency samples and their percentiles, in milliseconds. */
export class Samples {
  /**
   * The samples in `values[0, n)`: a typed array of doubles, so that every
   * instance has the same shape from the start (a fresh `[]` holds small
   * integers until its first fractional push changes its elements kind, which
   * deoptimised the generator's receive path compiled against an older
   * instance at the start of each measured phase). It starts small so that
   * a short warm-up grows it too: code compiled without ever seeing the
   * growth would be deoptimised at the first one.
   */
  private values = new Float64Array(16);
  private n = 0;

  add(ms: number): void {
    if (this.n === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.n++] = ms;
  }

  get count(): number {
    return this.n;
  }

  /** The p-th percentile (0–100, nearest rank), or NaN when empty. */
  percentile(p: number): number {
    if (this.n === 0) return Number.NaN;
    const sorted = this.values.slice(0, this.n).sort();
    const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
    return sorted[rank]!;
  }
}

/** Rounds for display and JSON: 3 significant decimals at most, NaN becomes null. */
export function round(n: number, digits = 2): number | null {
  if (!Number.isFinite(n)) return null;
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `fn` over `items` with at most `limit` calls in flight; resolves when all
 * settled and rethrows the first failure.
 */
export async function pool<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown;
  const worker = async (): Promise<void> => {
    while (next < items.length && failure === undefined) {
      const i = next++;
      try {
        await fn(items[i]!, i);
      } catch (e) {
        failure ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure;
}
