import { sql } from 'kysely';
import type { Db } from '../db.ts';
import { nowMs, type Dialect } from '../dialect.ts';

/** One physical slot's lease as stored. Times are unix ms by the database's clock. */
export interface SlotLease {
  slot: number;
  /** Owning node id; undefined when released (or never taken). */
  owner: number | undefined;
  /** Raised by every acquisition. */
  epoch: number;
  /** 0 when released. */
  expiresAt: number;
}

interface LeaseRow {
  slot: number | string;
  owner: number | string | null;
  epoch: number | string;
  expires_at: number | string;
}

function toLease(r: LeaseRow): SlotLease {
  return {
    slot: Number(r.slot),
    owner: r.owner === null ? undefined : Number(r.owner),
    epoch: Number(r.epoch),
    expiresAt: Number(r.expires_at),
  };
}

const LEASE_COLUMNS = ['slot', 'owner', 'epoch', 'expires_at'] as const;

/** Longest lease a node may take or renew, ms (a bound on a typo, not a tuning knob). */
const MAX_TTL_MS = 10 * 60_000;

function checkTtl(ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TTL_MS) throw new RangeError(`lease ttl must be 1..${MAX_TTL_MS} ms`);
}

/**
 * Slot ownership for cluster mode: one row per physical slot. Every operation
 * is one statement, atomic under concurrent nodes (PostgreSQL locks the row;
 * a loser sees the winner's row and gets nothing), timed by the database's
 * clock.
 *
 * - `acquire` takes a slot that is free (no row, released, or expired),
 *   raising its epoch; it fails (undefined) while another lease — including an
 *   earlier one of the same node — is live.
 * - `renew` extends a lease only for its owner under its epoch; it also works
 *   after expiry as long as nobody took the slot over (the epoch is unchanged).
 * - `release` gives a slot up at once (owner cleared, expiry 0; epoch kept, the
 *   next acquisition raises it).
 */
export function createSlotLeaseRepository(db: Db, dialect: Dialect) {
  const now = nowMs(dialect);
  return {
    /** The database clock, unix ms. */
    async now(): Promise<number> {
      const { rows } = await sql<{ now: number | string }>`select ${now} as now`.execute(db);
      return Number(rows[0]!.now);
    },

    /** Takes `slot` for `owner` for `ttlMs` if it is free or expired; the new lease, or undefined when another holds it. */
    async acquire(slot: number, owner: number, ttlMs: number): Promise<SlotLease | undefined> {
      checkTtl(ttlMs);
      const row = await db
        .insertInto('slot_leases')
        .values({ slot, owner, epoch: 1, expires_at: sql<number>`${now} + ${ttlMs}`, updated_at: now })
        .onConflict((oc) =>
          oc
            .column('slot')
            .doUpdateSet({
              owner: (eb) => eb.ref('excluded.owner'),
              epoch: sql<number>`slot_leases.epoch + 1`,
              expires_at: (eb) => eb.ref('excluded.expires_at'),
              updated_at: (eb) => eb.ref('excluded.updated_at'),
            })
            .where((eb) => eb.or([eb('slot_leases.owner', 'is', null), eb('slot_leases.expires_at', '<=', now)])),
        )
        .returning(LEASE_COLUMNS)
        .executeTakeFirst();
      return row ? toLease(row) : undefined;
    },

    /** Extends the lease of `owner` under `epoch` to now + `ttlMs`; undefined when it is no longer theirs. */
    async renew(slot: number, owner: number, epoch: number, ttlMs: number): Promise<SlotLease | undefined> {
      checkTtl(ttlMs);
      const row = await db
        .updateTable('slot_leases')
        .set({ expires_at: sql<number>`${now} + ${ttlMs}`, updated_at: now })
        .where('slot', '=', slot)
        .where('owner', '=', owner)
        .where('epoch', '=', epoch)
        .returning(LEASE_COLUMNS)
        .executeTakeFirst();
      return row ? toLease(row) : undefined;
    },

    /** Gives up the lease of `owner` under `epoch`; false when it was no longer theirs. */
    async release(slot: number, owner: number, epoch: number): Promise<boolean> {
      const r = await db
        .updateTable('slot_leases')
        .set({ owner: null, expires_at: 0, updated_at: now })
        .where('slot', '=', slot)
        .where('owner', '=', owner)
        .where('epoch', '=', epoch)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },

    async get(slot: number): Promise<SlotLease | undefined> {
      const row = await db.selectFrom('slot_leases').select(LEASE_COLUMNS).where('slot', '=', slot).executeTakeFirst();
      return row ? toLease(row) : undefined;
    },

    /** Every lease row in slot order, with the database clock at the time of reading (to tell live from expired). */
    async list(): Promise<{ now: number; leases: SlotLease[] }> {
      const rows = await db
        .selectFrom('slot_leases')
        .select([...LEASE_COLUMNS, now.as('now')])
        .orderBy('slot')
        .execute();
      const at = rows.length > 0 ? Number(rows[0]!.now) : await this.now();
      return { now: at, leases: rows.map(toLease) };
    },
  };
}

export type SlotLeaseRepository = ReturnType<typeof createSlotLeaseRepository>;
