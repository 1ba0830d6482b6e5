import type { Delivery } from '../messaging/delivery.ts';

/** One RECV awaiting its RECVACK. */
export interface PendingRecv {
  /** The delivery; undefined once acknowledged (its slot is then a hole, skipped). */
  delivery: Delivery | undefined;
  /** When it is resent next, unix ms. */
  due: number;
  /** Resends so far. */
  tries: number;
}

/** Slots a look-up by id scans; a queue spanning more keeps an index by id. */
const SCAN_SLOTS = 8;
/** First ring size, slots (a power of two). */
const FIRST_CAPACITY = 4;
const NO_SLOTS: (PendingRecv | undefined)[] = [];

/**
 * A session's RECVs awaiting RECVACK, oldest (re)sent first. It keeps what a
 * Map by decimal message id gave (insertion order; adding an id already
 * pending keeps its place) in a ring of entries instead: a client acks in
 * the order it receives, so an ack nearly always names the oldest entry, and
 * taking that one hashes no string and neither grows nor shrinks a hash
 * table (a Map did both per delivery: one set, one delete). A look-up by id
 * scans the few slots a short queue spans; a longer queue (a client that
 * lags) keeps a Map by id beside the ring while it is long.
 */
export class PendingAcks {
  /** The ring: `span` slots from `head`, holes included (undefined, or an acknowledged entry). */
  private slots = NO_SLOTS;
  private head = 0;
  private span = 0;
  private live = 0;
  /** Entries by decimal message id, kept while the ring spans more than SCAN_SLOTS. */
  private index: Map<string, PendingRecv> | undefined;

  /** Entries awaiting their RECVACK. */
  get size(): number {
    return this.live;
  }

  /** The entry (re)sent longest ago: the one an in-order RECVACK names. */
  oldest(): PendingRecv | undefined {
    // Holes at the head are trimmed as they form, so the head slot is live whenever any entry is.
    return this.live > 0 ? this.slots[this.head] : undefined;
  }

  /** The entry of the RECV with this decimal message id. */
  find(id: string): PendingRecv | undefined {
    if (this.index !== undefined) return this.index.get(id);
    const slots = this.slots;
    const mask = slots.length - 1;
    for (let i = 0; i < this.span; i++) {
      const e = slots[(this.head + i) & mask];
      if (e !== undefined && e.delivery !== undefined && e.delivery.messageIdText === id) return e;
    }
    return undefined;
  }

  /** Appends a new entry for `delivery` (whose id is not pending), due at `due`. */
  push(delivery: Delivery, due: number): void {
    this.append({ delivery, due, tries: 0 });
    this.live++;
  }

  /** Removes a pending entry (its RECVACK came). */
  remove(e: PendingRecv): void {
    this.index?.delete(e.delivery!.messageIdText);
    e.delivery = undefined;
    this.live--;
    this.trim();
    if (this.index !== undefined && this.span > 2 * this.live + SCAN_SLOTS) this.compact();
  }

  /** Moves the oldest entry to the end (it was just resent). */
  requeueOldest(): void {
    const e = this.slots[this.head]!;
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) & (this.slots.length - 1);
    this.span--;
    this.trim();
    this.append(e);
  }

  clear(): void {
    this.slots = NO_SLOTS;
    this.head = this.span = this.live = 0;
    this.index = undefined;
  }

  private append(e: PendingRecv): void {
    if (this.span === this.slots.length) this.resize(Math.max(FIRST_CAPACITY, 2 * this.slots.length));
    this.slots[(this.head + this.span) & (this.slots.length - 1)] = e;
    this.span++;
    if (this.index !== undefined) this.index.set(e.delivery!.messageIdText, e);
    else if (this.span > SCAN_SLOTS) this.buildIndex();
  }

  /** Drops the holes at the head; an empty queue forgets its index. */
  private trim(): void {
    const slots = this.slots;
    const mask = slots.length - 1;
    while (this.span > 0) {
      const e = slots[this.head];
      if (e !== undefined && e.delivery !== undefined) return;
      slots[this.head] = undefined;
      this.head = (this.head + 1) & mask;
      this.span--;
    }
    this.head = 0;
    this.index = undefined;
  }

  /** Copies the live entries, in order, into a ring of `capacity` slots. */
  private resize(capacity: number, liveOnly = false): void {
    const old = this.slots;
    const mask = old.length - 1;
    const slots = new Array<PendingRecv | undefined>(capacity);
    let n = 0;
    for (let i = 0; i < this.span; i++) {
      const e = old[(this.head + i) & mask];
      if (!liveOnly || (e !== undefined && e.delivery !== undefined)) slots[n++] = e;
    }
    this.slots = slots;
    this.head = 0;
    this.span = n;
  }

  /** Squeezes out the holes acks left behind the head; a queue short again drops its index. */
  private compact(): void {
    let capacity = this.slots.length;
    while (capacity > FIRST_CAPACITY && capacity >= 4 * this.live) capacity >>= 1;
    this.resize(capacity, true);
    if (this.span <= SCAN_SLOTS) this.index = undefined;
  }

  private buildIndex(): void {
    const index = new Map<string, PendingRecv>();
    const mask = this.slots.length - 1;
    for (let i = 0; i < this.span; i++) {
      const e = this.slots[(this.head + i) & mask];
      if (e !== undefined && e.delivery !== undefined) index.set(e.delivery.messageIdText, e);
    }
    this.index = index;
  }
}
