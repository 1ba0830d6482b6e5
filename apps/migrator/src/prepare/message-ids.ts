/**
 * The message ids seen so far, to find one used twice: every retained message
 * is looked up once, so the table avoids string hashing and per-id objects.
 * Ids are canonical unsigned decimal strings (the reader's form of a u64);
 * each is stored as two exact doubles, its leading digits and its last ten,
 * in an open-addressing table over typed arrays. Anything else (never written
 * by the reader) goes to a plain map.
 */
/** First slot of an id: both halves (below 10^10, so `% 2^32` is exact) mixed, high bits folded down. */
function slotOf(high: number, low: number, mask: number): number {
  let h = Math.imul((low % 4294967296) ^ Math.imul(high % 4294967296, 0x85ebca6b), 0x9e3779b1);
  h ^= h >>> 15;
  return h & mask;
}

export class MessageIdTable {
  private high = new Float64Array(1 << 12);
  private low = new Float64Array(1 << 12);
  /** Row of each slot plus one; 0 marks an empty slot. */
  private rows = new Int32Array(1 << 12);
  private used = 0;
  private readonly other = new Map<string, number>();

  /** The row stored for `id`, or -1 after storing `row` for it. */
  addOrGet(id: string, row: number): number {
    const n = id.length;
    if (n === 0 || n > 20 || (n > 1 && id.charCodeAt(0) === 48)) return this.otherAddOrGet(id, row);
    let high = 0;
    let low = 0;
    const split = n > 10 ? n - 10 : 0;
    for (let i = 0; i < n; i++) {
      const d = id.charCodeAt(i) - 48;
      if (d < 0 || d > 9) return this.otherAddOrGet(id, row);
      if (i < split) high = high * 10 + d;
      else low = low * 10 + d;
    }
    const mask = this.rows.length - 1;
    let slot = slotOf(high, low, mask);
    for (;;) {
      const r = this.rows[slot]!;
      if (r === 0) break;
      if (this.low[slot] === low && this.high[slot] === high) return r - 1;
      slot = (slot + 1) & mask;
    }
    this.high[slot] = high;
    this.low[slot] = low;
    this.rows[slot] = row + 1;
    if (++this.used * 2 > this.rows.length) this.grow();
    return -1;
  }

  /** The row stored for `id`, or -1 (nothing is stored). */
  get(id: string): number {
    const n = id.length;
    if (n === 0 || n > 20 || (n > 1 && id.charCodeAt(0) === 48)) return this.other.get(id) ?? -1;
    let high = 0;
    let low = 0;
    const split = n > 10 ? n - 10 : 0;
    for (let i = 0; i < n; i++) {
      const d = id.charCodeAt(i) - 48;
      if (d < 0 || d > 9) return this.other.get(id) ?? -1;
      if (i < split) high = high * 10 + d;
      else low = low * 10 + d;
    }
    const mask = this.rows.length - 1;
    for (let slot = slotOf(high, low, mask); ; slot = (slot + 1) & mask) {
      const r = this.rows[slot]!;
      if (r === 0) return -1;
      if (this.low[slot] === low && this.high[slot] === high) return r - 1;
    }
  }

  private otherAddOrGet(id: string, row: number): number {
    const prior = this.other.get(id);
    if (prior !== undefined) return prior;
    this.other.set(id, row);
    return -1;
  }

  private grow(): void {
    const { high, low, rows } = this;
    const size = rows.length * 2;
    this.high = new Float64Array(size);
    this.low = new Float64Array(size);
    this.rows = new Int32Array(size);
    const mask = size - 1;
    for (let i = 0; i < rows.length; i++) {
      if (rows[i] === 0) continue;
      let slot = slotOf(high[i]!, low[i]!, mask);
      while (this.rows[slot] !== 0) slot = (slot + 1) & mask;
      this.high[slot] = high[i]!;
      this.low[slot] = low[i]!;
      this.rows[slot] = rows[i]!;
    }
  }
}
