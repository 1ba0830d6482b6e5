/**
 * Collects items until `maxItems` are waiting or `maxWaitMs` has passed since
 * the first one, then hands the batch on. `add` is O(1) amortized and never
 * throws, so it is safe on the send path; the timer is unref'd so a pending
 * batch never keeps the process alive.
 */
export class Batcher<T> {
  private items: T[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly maxItems: number,
    /** Milliseconds from the first item of a batch to its flush. */
    private readonly maxWaitMs: number,
    private readonly onBatch: (items: T[]) => void,
  ) {}

  add(item: T): void {
    this.items.push(item);
    if (this.items.length >= this.maxItems) {
      this.flush();
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.maxWaitMs);
      this.timer.unref();
    }
  }

  /** Hands on whatever is waiting now (also used at shutdown). */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.items.length === 0) return;
    const batch = this.items;
    this.items = [];
    this.onBatch(batch);
  }
}
