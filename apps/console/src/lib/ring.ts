/**
 * A fixed-capacity ring buffer: pushing past capacity drops the oldest
 * value. Charts keep one per node and metric, sized range ÷ refresh interval.
 */
export class Ring<T> {
  private buf: (T | undefined)[];
  private start = 0;
  private count = 0;

  constructor(capacity: number) {
    this.buf = new Array<T | undefined>(Math.max(1, Math.floor(capacity)));
  }

  get capacity(): number {
    return this.buf.length;
  }

  get size(): number {
    return this.count;
  }

  get full(): boolean {
    return this.count === this.buf.length;
  }

  push(value: T): void {
    const end = (this.start + this.count) % this.buf.length;
    this.buf[end] = value;
    if (this.count < this.buf.length) this.count++;
    else this.start = (this.start + 1) % this.buf.length;
  }

  /** The newest value, if any. */
  last(): T | undefined {
    return this.count === 0 ? undefined : this.buf[(this.start + this.count - 1) % this.buf.length];
  }

  /** Oldest first. */
  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.buf[(this.start + i) % this.buf.length] as T);
    return out;
  }

  /** A new capacity, keeping the newest values that fit. */
  resize(capacity: number): void {
    const keep = this.toArray();
    this.buf = new Array<T | undefined>(Math.max(1, Math.floor(capacity)));
    this.start = 0;
    this.count = 0;
    for (const v of keep.slice(-this.buf.length)) this.push(v);
  }

  clear(): void {
    this.buf.fill(undefined);
    this.start = 0;
    this.count = 0;
  }
}
