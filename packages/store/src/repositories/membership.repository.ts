import { sql, type Selectable } from 'kysely';
import type { MembershipsTable } from '../schema.ts';
import type { Db } from '../db.ts';

export interface MembershipRow {
  channelId: string;
  channelType: number;
  uid: string;
  joinSeq: number;
  readSeq: number;
  deletedToSeq: number;
  activatedAt: number;
  lastSendSeq: number;
  removed: boolean;
}

/** Rows per statement when writing uid lists. */
const CHUNK = 500;

/** A position in a user's conversation directory. */
export interface DirectoryKey {
  activatedAt: number;
  channelId: string;
  channelType: number;
}

function toRow(row: Selectable<MembershipsTable>): MembershipRow {
  return {
    channelId: row.channel_id,
    channelType: Number(row.channel_type),
    uid: row.uid,
    joinSeq: Number(row.join_seq),
    readSeq: Number(row.read_seq),
    deletedToSeq: Number(row.deleted_to_seq),
    activatedAt: Number(row.activated_at),
    lastSendSeq: Number(row.last_send_seq),
    removed: Number(row.removed) === 1,
  };
}

/**
 * Memberships: a user's subscription to a channel and its conversation state
 * (join boundary, read position, deletion floor). Removal leaves a tombstone.
 */
export function createMembershipRepository(db: Db) {
  return {
    /**
     * Makes each uid a live member: new rows and removed ones get `joinSeq`
     * (they see only later messages); live members are left unchanged.
     */
    async addMembers(channelId: string, channelType: number, uids: readonly string[], joinSeq: number): Promise<void> {
      const now = Date.now();
      for (let i = 0; i < uids.length; i += CHUNK) {
        const part = uids.slice(i, i + CHUNK);
        await db
          .insertInto('memberships')
          .values(part.map((uid) => ({ channel_id: channelId, channel_type: channelType, uid, join_seq: joinSeq, updated_at: now })))
          .onConflict((oc) =>
            oc
              .columns(['channel_id', 'channel_type', 'uid'])
              .doUpdateSet({ join_seq: joinSeq, removed: 0, read_seq: 0, deleted_to_seq: 0, activated_at: 0, updated_at: now })
              .where('memberships.removed', '=', 1),
          )
          .execute();
      }
    },

    async removeMembers(channelId: string, channelType: number, uids: readonly string[]): Promise<void> {
      const now = Date.now();
      for (let i = 0; i < uids.length; i += CHUNK) {
        await db
          .updateTable('memberships')
          .set({ removed: 1, updated_at: now })
          .where('channel_id', '=', channelId)
          .where('channel_type', '=', channelType)
          .where('uid', 'in', uids.slice(i, i + CHUNK))
          .execute();
      }
    },

    async removeAll(channelId: string, channelType: number): Promise<void> {
      await db
        .updateTable('memberships')
        .set({ removed: 1, updated_at: Date.now() })
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('removed', '=', 0)
        .execute();
    },

    async listLiveUids(channelId: string, channelType: number): Promise<string[]> {
      const rows = await db
        .selectFrom('memberships')
        .select('uid')
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('removed', '=', 0)
        .execute();
      return rows.map((r) => r.uid);
    },

    async get(channelId: string, channelType: number, uid: string): Promise<MembershipRow | undefined> {
      const row = await db
        .selectFrom('memberships')
        .selectAll()
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('uid', '=', uid)
        .executeTakeFirst();
      return row ? toRow(row) : undefined;
    },

    /**
     * One page of a user's memberships in directory order: `activated_at`
     * descending, then channel id and type ascending, strictly after `after`.
     */
    async pageByUid(uid: string, after: DirectoryKey | undefined, limit: number): Promise<MembershipRow[]> {
      let q = db.selectFrom('memberships').selectAll().where('uid', '=', uid);
      if (after) {
        q = q.where((eb) =>
          eb.or([
            eb('activated_at', '<', after.activatedAt),
            eb.and([
              eb('activated_at', '=', after.activatedAt),
              eb.or([
                eb('channel_id', '>', after.channelId),
                eb.and([eb('channel_id', '=', after.channelId), eb('channel_type', '>', after.channelType)]),
              ]),
            ]),
          ]),
        );
      }
      const rows = await q.orderBy('activated_at', 'desc').orderBy('channel_id').orderBy('channel_type').limit(limit).execute();
      return rows.map(toRow);
    },

    /** Raises `read_seq` to `seq` (never lowers it). */
    async raiseReadSeq(channelId: string, channelType: number, uid: string, seq: number): Promise<void> {
      await db
        .updateTable('memberships')
        .set({ read_seq: seq, updated_at: Date.now() })
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('uid', '=', uid)
        .where('read_seq', '<', seq)
        .execute();
    },

    /** Hides a conversation up to `seq`: a newer message shows it again. */
    async hideUpTo(channelId: string, channelType: number, uid: string, seq: number): Promise<void> {
      await db
        .updateTable('memberships')
        .set((eb) => ({
          deleted_to_seq: eb.case().when('deleted_to_seq', '<', seq).then(seq).else(eb.ref('deleted_to_seq')).end(),
          activated_at: 0,
          updated_at: Date.now(),
        }))
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('uid', '=', uid)
        .execute();
    },

    async activate(channelId: string, channelType: number, uid: string, at: number): Promise<void> {
      await db
        .updateTable('memberships')
        .set({ activated_at: at, updated_at: Date.now() })
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('uid', '=', uid)
        .execute();
    },
  };
}

/**
 * A membership an append makes sure of in its own transaction (a person channel's participants
 * with its first message): created with join_seq 1 when missing, left as it is when present.
 */
export interface EnsuredMember {
  channelId: string;
  channelType: number;
  uid: string;
}

/** One sender's newest ordinary seq in one channel, written with a committed batch. */
export interface LastSendMark {
  channelId: string;
  channelType: number;
  uid: string;
  seq: number;
}

/** Most memberships one `ensureMembersIn` statement inserts (5 parameters each: well under either engine's limit). */
const MEMBERS_PER_STATEMENT = 1000;

/**
 * Creates each missing membership of `members` with join_seq 1 on `db` (a connection or a
 * transaction); one that exists stays as it is.
 */
export async function ensureMembersIn(db: Db, members: readonly EnsuredMember[]): Promise<void> {
  const now = Date.now();
  for (let i = 0; i < members.length; i += MEMBERS_PER_STATEMENT) {
    await db
      .insertInto('memberships')
      .values(
        members
          .slice(i, i + MEMBERS_PER_STATEMENT)
          .map((m) => ({ channel_id: m.channelId, channel_type: m.channelType, uid: m.uid, join_seq: 1, updated_at: now })),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

/** Records each sender's latest send (one statement for the whole batch). */
export async function markLastSends(db: Db, marks: readonly LastSendMark[]): Promise<void> {
  if (marks.length === 0) return;
  const rows = sql.join(
    marks.map(
      (m) => sql`(cast(${m.channelId} as text), cast(${m.channelType} as integer), cast(${m.uid} as text), cast(${m.seq} as bigint))`,
    ),
  );
  await sql`with v(channel_id, channel_type, uid, seq) as (values ${rows})
    update memberships set last_send_seq = v.seq from v
    where memberships.channel_id = v.channel_id and memberships.channel_type = v.channel_type
      and memberships.uid = v.uid and memberships.last_send_seq < v.seq`.execute(db);
}

export type MembershipRepository = ReturnType<typeof createMembershipRepository>;
