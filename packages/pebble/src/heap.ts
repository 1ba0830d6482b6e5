/** A small binary min-heap ordered by a comparison function (used for k-way merges). */
export class Heap<T> {
  private readonly items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  /** Smallest item, or undefined when empty. */
  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(a[i]!, a[parent]!)) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  /** Restores order after the top item was changed in place (cheaper than pop + push). */
  fixTop(): void {
    if (this.items.length > 0) this.siftDown(0);
  }

  private siftDown(i: number): void {
    const a = this.items;
    const n = a.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      const m = r < n && this.less(a[r]!, a[l]!) ? r : l;
      if (!this.less(a[m]!, a[i]!)) return;
      [a[i], a[m]] = [a[m]!, a[i]!];
      i = m;
    }
  }
}
