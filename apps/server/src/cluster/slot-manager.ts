import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { SlotTable } from './slots.ts';
import { slotQuota, slotsToRelease } from './slots.ts';

/** One physical slot's lease as the store reports it (times: unix ms by the database's clock). */
export interface Lease {
  slot: number;
  owner: number | undefined;
  epoch: number;
  expiresAt: number;
}

/** The lease operations of the store (`slot_leases` in PostgreSQL), each one atomic statement. */
export interface LeaseStore {
  acquire(slot: number, owner: number, ttlMs: number): Promise<Lease | undefined>;
  renew(slot: number, owner: number, epoch: number, ttlMs: number): Promise<Lease | undefined>;
  release(slot: number, owner: number, epoch: number): Promise<boolean>;
  list(): Promise<{ now: number; leases: Lease[] }>;
}

/** What the slot manager needs to know about the other nodes. */
export interface LiveNodes {
  liveIds(): number[];
  liveForMs(id: number): number;
}

/** A slot this node holds. */
interface Held {
  epoch: number;
  /** `performance.now()` until which this node may append to it without renewing. */
  validUntil: number;
}

/** The slot map as last read from the store. */
export interface SlotMapView {
  /** `performance.now()` of the read; undefined before the first. */
  readAt: number | undefined;
  dbNow: number;
  leases: Lease[];
}

export interface SlotManagerHooks {
  /** This node gained or lost slots (heartbeat and notice to the others). */
  changed(): void;
  /** A slot changed hands here: cached channel tails of it must be read again. */
  forgetSlot(slot: number): void;
  /** Resolves when appends queued so far are committed (bounded by the caller). */
  drain(): Promise<void>;
}

/** Longest a handover waits for queued appends of the slot to commit before releasing it anyway, ms. */
const HANDOVER_DRAIN_MS = 1000;
/** A node must have been live this long before slots are handed to it (no churn on a flapping node), ms. */
const STABLE_BEFORE_HANDOVER_MS = 2000;

/**
 * Slot ownership through leases in the store. Every third of the lease TTL a
 * node renews what it holds, reads the slot map, takes free or expired slots
 * while it holds fewer than its share (`ceil(slots / live nodes)`), and hands
 * slots over (release after its queue drains) while it holds more than its
 * share and a live node holds fewer than `floor`. A node appends to a slot
 * only while its lease is surely valid (renewed within TTL − margin); the
 * store's epoch check is the hard fence behind that.
 */
export class SlotManager {
  private readonly held = new Map<number, Held>();
  private readonly releasing = new Set<number>();
  private view: SlotMapView = { readAt: undefined, dbNow: 0, leases: [] };
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly marginMs: number;

  constructor(
    private readonly leases: LeaseStore,
    readonly table: SlotTable,
    private readonly nodeId: number,
    private readonly nodes: LiveNodes,
    private readonly ttlMs: number,
    private readonly hooks: SlotManagerHooks,
    private readonly log: Logger,
  ) {
    this.marginMs = Math.min(1000, Math.floor(ttlMs / 4));
  }

  get intervalMs(): number {
    return Math.max(100, Math.floor(this.ttlMs / 3));
  }

  start(): void {
    this.timer = setInterval(() => this.nudge(), this.intervalMs);
    this.timer.unref();
    this.nudge();
  }

  /** Runs a round now (or right after the one running). */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .catch((err: unknown) => this.log.warn({ err }, 'slot lease round failed'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.nudge();
        }
      });
  }

  /** Waits for the round in progress, if any. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  private async round(): Promise<void> {
    let changed = await this.renewHeld();
    const { now, leases } = await this.leases.list();
    this.view = { readAt: performance.now(), dbNow: now, leases };
    changed = (await this.acquireShare(now, leases)) || changed;
    changed = (await this.handOver(now, leases)) || changed;
    if (changed) {
      const fresh = await this.leases.list();
      this.view = { readAt: performance.now(), dbNow: fresh.now, leases: fresh.leases };
      this.hooks.changed();
    }
  }

  private async renewHeld(): Promise<boolean> {
    let changed = false;
    await Promise.all(
      [...this.held].map(async ([slot, h]) => {
        const started = performance.now();
        const lease = await this.leases.renew(slot, this.nodeId, h.epoch, this.ttlMs).catch((err: unknown) => {
          this.log.warn({ err, slot }, 'slot lease renewal failed');
          return null;
        });
        if (lease === null) return; // unknown: keep appending only until validUntil runs out
        if (lease === undefined) {
          this.lose(slot, 'taken over by another node');
          changed = true;
          return;
        }
        h.validUntil = started + this.ttlMs - this.marginMs;
      }),
    );
    return changed;
  }

  private liveLeaseOwner(lease: Lease | undefined, dbNow: number): number | undefined {
    return lease && lease.owner !== undefined && lease.expiresAt > dbNow ? lease.owner : undefined;
  }

  private async acquireShare(dbNow: number, leases: Lease[]): Promise<boolean> {
    const live = this.nodes.liveIds();
    const { ceil } = slotQuota(this.table.slotCount, live.length);
    if (this.held.size >= ceil) return false;
    const bySlot = new Map(leases.map((l) => [l.slot, l]));
    const free: number[] = [];
    const n = this.table.slotCount;
    // Start from a node-specific offset so that nodes racing for free slots mostly ask for different ones.
    for (let i = 0; i < n; i++) {
      const slot = (i + this.nodeId * 7) % n;
      if (this.held.has(slot)) continue;
      if (this.liveLeaseOwner(bySlot.get(slot), dbNow) === undefined) free.push(slot);
    }
    let changed = false;
    for (const slot of free) {
      if (this.held.size >= ceil || this.stopped) break;
      const started = performance.now();
      const lease = await this.acquireBounded(slot);
      if (!lease) continue;
      this.hooks.forgetSlot(slot);
      this.held.set(slot, { epoch: lease.epoch, validUntil: started + this.ttlMs - this.marginMs });
      this.log.info({ slot, epoch: lease.epoch }, 'slot acquired');
      changed = true;
    }
    return changed;
  }

  /**
   * One acquisition, waited for at most a third of the lease TTL: a frozen
   * owner caught inside an append transaction holds a share lock on its lease
   * row until it wakes or PostgreSQL ends its session, and a round stuck
   * behind it would stop renewing this node's own leases. An acquisition that
   * succeeds after being given up is released at once.
   */
  private async acquireBounded(slot: number): Promise<Lease | undefined> {
    const pending = this.leases.acquire(slot, this.nodeId, this.ttlMs);
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), this.intervalMs)));
    try {
      const lease = await Promise.race([pending, gaveUp]);
      if (lease !== 'timeout') return lease;
      this.log.warn({ slot }, 'slot acquisition waits on a lock (its former owner is inside a transaction); given up for this round');
      pending
        .then((late) => (late ? this.leases.release(slot, this.nodeId, late.epoch) : undefined))
        .catch((err: unknown) => this.log.warn({ err, slot }, 'late slot acquisition failed'));
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  private async handOver(dbNow: number, leases: Lease[]): Promise<boolean> {
    const counts = new Map<number, number>();
    for (const id of this.nodes.liveIds()) {
      // A node that just joined counts as holding its share until it is stable, so nothing is handed to it yet.
      if (id !== this.nodeId && this.nodes.liveForMs(id) < STABLE_BEFORE_HANDOVER_MS) continue;
      counts.set(id, 0);
    }
    for (const l of leases) {
      const owner = this.liveLeaseOwner(l, dbNow);
      if (owner !== undefined && counts.has(owner)) counts.set(owner, counts.get(owner)! + 1);
    }
    counts.set(this.nodeId, this.held.size);
    const give = slotsToRelease([...this.held.keys()], counts, this.table.slotCount);
    for (const slot of give) {
      const h = this.held.get(slot);
      if (!h) continue;
      this.releasing.add(slot);
      await Promise.race([this.hooks.drain(), new Promise((r) => setTimeout(r, HANDOVER_DRAIN_MS))]);
      await this.leases.release(slot, this.nodeId, h.epoch).catch((err: unknown) => this.log.warn({ err, slot }, 'slot release failed'));
      this.held.delete(slot);
      this.releasing.delete(slot);
      this.hooks.forgetSlot(slot);
      this.log.info({ slot, epoch: h.epoch }, 'slot handed over');
    }
    return give.length > 0;
  }

  /** This node no longer holds `slot` (renewal refused, or an append was fenced off). */
  lose(slot: number, why: string): void {
    if (!this.held.delete(slot)) return;
    this.hooks.forgetSlot(slot);
    this.log.warn({ slot, why }, 'slot lost');
    this.nudge();
  }

  /** Whether this node may append to `slot` now. */
  ownsWritable(slot: number): boolean {
    const h = this.held.get(slot);
    return h !== undefined && !this.releasing.has(slot) && performance.now() < h.validUntil;
  }

  /** The fence an append to `slot` carries: this node's epoch of it (0 when it holds none, which the store refuses). */
  epochOf(slot: number): number {
    return this.held.get(slot)?.epoch ?? 0;
  }

  /** The live owner of `slot` in the last slot map read, if any. */
  ownerOf(slot: number): number | undefined {
    const lease = this.view.leases.find((l) => l.slot === slot);
    const readAgo = this.view.readAt === undefined ? Infinity : performance.now() - this.view.readAt;
    return this.liveLeaseOwner(lease, this.view.dbNow + readAgo);
  }

  /** Slots this node holds, ascending. */
  heldSlots(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b);
  }

  /** Whether the slot map was read within one lease TTL (readiness). */
  get mapCurrent(): boolean {
    return this.view.readAt !== undefined && performance.now() - this.view.readAt < this.ttlMs;
  }

  get map(): SlotMapView {
    return this.view;
  }

  /** A number that grows with every change of ownership: the sum of the slots' epochs. */
  get stateRevision(): number {
    return this.view.leases.reduce((sum, l) => sum + l.epoch, 0);
  }

  /**
   * Stops the rounds and gives every held slot up at once (a clean shutdown
   * hands them over without waiting for expiry): appends stop being taken,
   * those queued commit (bounded wait), then the leases are released.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.settled();
    for (const slot of this.held.keys()) this.releasing.add(slot);
    await Promise.race([this.hooks.drain(), new Promise((r) => setTimeout(r, 2 * HANDOVER_DRAIN_MS))]);
    const held = [...this.held];
    this.held.clear();
    await Promise.all(
      held.map(([slot, h]) =>
        this.leases.release(slot, this.nodeId, h.epoch).catch((err: unknown) => this.log.warn({ err, slot }, 'slot release failed')),
      ),
    );
  }
}
