import { sql, type InferResult } from 'kysely';
import type { Db } from '../db.ts';
import type { Dialect } from '../dialect.ts';
import { StaleEpochError, type AppendFence } from '../errors.ts';
import { idemHashOf } from '../sqlite/idem-hash.ts';
import { compiledOnce } from './compiled-query.ts';
import { MESSAGE_BODY_COLUMNS } from '../tables.ts';
import { ensureMembersIn, markLastSends, type EnsuredMember, type LastSendMark } from './membership.repository.ts';

/** A message row as stored. `messageId` is a decimal string when read back. */
export interface StoredMessage {
  channelId: string;
  channelType: number;
  messageSeq: number;
  messageId: bigint;
  clientMsgNo: string;
  fromUid: string;
  setting: number;
  /** Header bits: 1 no_persist, 2 red_dot, 4 sync_once. */
  flags: number;
  expire: number;
  topic: string;
  /** Server append time, unix ms. */
  createdAt: number;
  payload: Uint8Array;
}

/** A send's idempotency key. */
export interface IdempotencyKey {
  channelId: string;
  channelType: number;
  fromUid: string;
  clientMsgNo: string;
}

/** Keys per look-up statement (4 or 5 parameters each). */
const KEY_CHUNK = 250;

/** An earlier message found under an idempotency key. */
export interface IdempotentHit extends IdempotencyKey {
  messageId: bigint;
  messageSeq: number;
  payload: Uint8Array;
}

/** Rows per INSERT statement (12 or 13 parameters each; under every dialect's limit). */
const INSERT_CHUNK = 500;
/** Channels one `loadTails` statement reads (3 parameters each). */
const TAIL_CHUNK = 500;

/** A channel, as `loadTails` takes it. */
export interface ChannelKey {
  channelId: string;
  channelType: number;
}

const messageColumns = [
  'channel_id',
  'channel_type',
  'message_seq',
  sql<string>`cast(message_id as text)`.as('message_id_text'),
  ...MESSAGE_BODY_COLUMNS,
] as const;

/** The message columns every read selects, with the 64-bit id as text (never a JS number). */
function selectMessages(db: Db) {
  return db.selectFrom('messages').select(messageColumns);
}

type MessageSelect = InferResult<ReturnType<typeof selectMessages>>[number];

function toStored(r: MessageSelect): StoredMessage {
  return {
    channelId: r.channel_id,
    channelType: Number(r.channel_type),
    messageSeq: Number(r.message_seq),
    messageId: BigInt(r.message_id_text),
    clientMsgNo: r.client_msg_no,
    fromUid: r.from_uid,
    setting: Number(r.setting),
    flags: Number(r.flags),
    expire: Number(r.expire),
    topic: r.topic,
    createdAt: Number(r.created_at),
    payload: r.payload,
  };
}

/** The message log of every channel, keyed by `(channel, message_seq)`. */
export function createMessageRepository(db: Db, dialect: Dialect = 'sqlite') {
  // The embedded store indexes idempotency keys by their hash (`sqlite/idem-hash.ts`): its inserts fill it, its look-ups seek by it.
  const sqlite = dialect === 'sqlite';
  // A channel's tail, read once per channel the send path starts to sequence: its newest seq, or
  // the floor its log keeps (`channel_log`), whichever is higher; one statement, compiled once.
  const tailOf = compiledOnce(
    (channelId: string, channelType: number, logChannelId: string, logChannelType: number) =>
      db.selectNoFrom((eb) => [
        eb
          .selectFrom('messages')
          .select((m) => m.fn.max('message_seq').as('m'))
          .where('channel_id', '=', channelId)
          .where('channel_type', '=', channelType)
          .as('tail'),
        eb
          .selectFrom('channel_log')
          .select('tail_seq')
          .where('channel_id', '=', logChannelId)
          .where('channel_type', '=', logChannelType)
          .as('floor'),
      ]),
    ['\u0000channel_id', -0x7fff_fff4, '\u0000log_channel_id', -0x7fff_fff5] as const,
  );
  return {
    /** The committed tail of a channel: its highest seq, or the recorded floor when higher. */
    async loadTail(channelId: string, channelType: number): Promise<number> {
      const row = (await db.executeQuery(tailOf(channelId, channelType, channelId, channelType))).rows[0];
      return Math.max(Number(row?.tail ?? 0), Number(row?.floor ?? 0));
    },

    /**
     * The committed tails of several channels (as `loadTail` each, in the given order), in one
     * statement per `TAIL_CHUNK` channels: what a commit reads for the channels it sequences
     * for the first time, one round trip instead of one per channel.
     */
    async loadTails(channels: readonly ChannelKey[]): Promise<number[]> {
      const tails: number[] = [];
      for (let i = 0; i < channels.length; i += TAIL_CHUNK) {
        const part = channels.slice(i, i + TAIL_CHUNK);
        const values = sql.join(
          part.map((c, j) => sql`(cast(${j} as integer), cast(${c.channelId} as text), cast(${c.channelType} as integer))`),
        );
        const { rows } = await sql<{ i: number | string; tail: number | string | null; floor: number | string | null }>`
          with v(i, channel_id, channel_type) as (values ${values})
          select v.i as i,
            (select max(m.message_seq) from messages m where m.channel_id = v.channel_id and m.channel_type = v.channel_type) as tail,
            (select l.tail_seq from channel_log l where l.channel_id = v.channel_id and l.channel_type = v.channel_type) as floor
          from v`.execute(db);
        const found = new Array<number>(part.length).fill(0);
        for (const r of rows) found[Number(r.i)] = Math.max(Number(r.tail ?? 0), Number(r.floor ?? 0));
        tails.push(...found);
      }
      return tails;
    },

    /**
     * Earlier messages under any of the given idempotency keys
     * `(channel, sender, client_msg_no)`: one indexed query for a whole batch
     * (on SQLite by each key's hash and its four columns; the embedded store
     * replaces this with a prepared statement per key).
     */
    async findByIdempotencyKeys(keys: readonly IdempotencyKey[]): Promise<IdempotentHit[]> {
      const hits: IdempotentHit[] = [];
      for (let i = 0; i < keys.length; i += KEY_CHUNK) {
        const values = sql.join(
          keys
            .slice(i, i + KEY_CHUNK)
            .map((k) =>
              sqlite
                ? sql`(cast(${idemHashOf(k.channelId, k.channelType, k.fromUid, k.clientMsgNo)} as integer), ${k.channelId}, ${k.channelType}, ${k.fromUid}, ${k.clientMsgNo})`
                : sql`(cast(${k.channelId} as text), cast(${k.channelType} as integer), cast(${k.fromUid} as text), cast(${k.clientMsgNo} as text))`,
            ),
        );
        const tuple = sqlite
          ? sql<boolean>`(idem_hash, channel_id, channel_type, from_uid, client_msg_no) in (values ${values})`
          : sql<boolean>`(channel_id, channel_type, from_uid, client_msg_no) in (values ${values})`;
        const rows = await db
          .selectFrom('messages')
          .select([
            'channel_id',
            'channel_type',
            'from_uid',
            'client_msg_no',
            sql<string>`cast(message_id as text)`.as('id_text'),
            'message_seq',
            'payload',
          ])
          .where('client_msg_no', '<>', '')
          .where(tuple)
          .execute();
        for (const r of rows) {
          hits.push({
            channelId: r.channel_id,
            channelType: Number(r.channel_type),
            fromUid: r.from_uid,
            clientMsgNo: r.client_msg_no,
            messageId: BigInt(r.id_text),
            messageSeq: Number(r.message_seq),
            payload: r.payload,
          });
        }
      }
      return hits;
    },

    /**
     * Commits a batch of messages and each sender's latest-send mark in one
     * transaction: either all of it is durable or none of it.
     *
     * With a `fence` (or several, one per physical slot in the batch), the same
     * transaction first checks that each slot's lease still has that epoch (on
     * PostgreSQL holding a share lock on the lease rows until commit, so a
     * takeover waits for this batch and a batch after a takeover sees the new
     * epoch); otherwise nothing is written and it rejects with
     * `StaleEpochError` naming the first stale fence. A `(channel, seq)` taken
     * by another writer rejects with the driver's unique violation
     * (`isUniqueViolation`).
     *
     * `members` (a new person channel's participants, with its first message)
     * are made sure of in the same transaction, before the rows: created with
     * join_seq 1 when missing (then raised by the batch's marks like any
     * other), left as they are when present.
     */
    async appendBatch(
      rows: readonly StoredMessage[],
      marks: readonly LastSendMark[],
      fence?: AppendFence | readonly AppendFence[],
      members: readonly EnsuredMember[] = [],
    ): Promise<void> {
      const fences: readonly AppendFence[] = fence === undefined ? [] : Array.isArray(fence) ? fence : [fence as AppendFence];
      await db.transaction().execute(async (trx) => {
        if (fences.length > 0) {
          let q = trx
            .selectFrom('slot_leases')
            .select(['slot', 'epoch'])
            .where(
              'slot',
              'in',
              fences.map((f) => f.slot),
            )
            .orderBy('slot');
          if (dialect === 'postgres') q = q.forShare();
          const leases = new Map((await q.execute()).map((l) => [Number(l.slot), Number(l.epoch)]));
          for (const f of fences) {
            const epoch = leases.get(f.slot);
            if (epoch !== f.epoch) throw new StaleEpochError(f, epoch);
          }
        }
        await ensureMembersIn(trx, members);
        for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
          await trx
            .insertInto('messages')
            .values(
              rows.slice(i, i + INSERT_CHUNK).map((m) => ({
                ...messageRow(m),
                ...(sqlite ? { idem_hash: idemHashOf(m.channelId, m.channelType, m.fromUid, m.clientMsgNo) } : {}),
              })),
            )
            .execute();
        }
        await markLastSends(trx, marks);
      });
    },

    /**
     * Where the store offers it (the embedded store's writer thread), an
     * unfenced `appendBatch` that first looks up, in the same transaction, the
     * idempotency key of every row that has one (as `findByIdempotencyKeys`):
     * when none was committed before it commits the batch and resolves to `[]`
     * once durable; otherwise it writes nothing and resolves to the earlier
     * messages found. `members` (a person channel's participants with its first
     * message) are made sure of in the same transaction, before the rows.
     */
    appendChecked: undefined as
      | ((rows: readonly StoredMessage[], marks: readonly LastSendMark[], members?: readonly EnsuredMember[]) => Promise<IdempotentHit[]>)
      | undefined,

    /** Messages of one channel with any of the given ids (exact 64-bit). */
    async byIds(channelId: string, channelType: number, ids: readonly bigint[]): Promise<StoredMessage[]> {
      if (ids.length === 0) return [];
      const rows = await selectMessages(db)
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('message_id', 'in', ids as bigint[])
        .execute();
      return rows.map((r) => toStored(r));
    },

    async bySeqs(channelId: string, channelType: number, seqs: readonly number[]): Promise<StoredMessage[]> {
      if (seqs.length === 0) return [];
      const rows = await selectMessages(db)
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('message_seq', 'in', seqs as number[])
        .execute();
      return rows.map((r) => toStored(r));
    },

    /** Messages under one client message number, oldest first, looking at no more than `maxEntries`. */
    async byClientMsgNo(channelId: string, channelType: number, clientMsgNo: string, maxEntries: number): Promise<StoredMessage[]> {
      const rows = await selectMessages(db)
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('client_msg_no', '=', clientMsgNo)
        .orderBy('message_seq')
        .limit(maxEntries)
        .execute();
      return rows.map((r) => toStored(r));
    },

    /**
     * Messages with `lower ≤ seq ≤ upper`, at most `limit` of them, taken from
     * the newest end (`newest`) or the oldest; returned in ascending seq order.
     * `more` is true when the bounds hold further messages beyond the page.
     */
    async range(
      channelId: string,
      channelType: number,
      lower: number,
      upper: number,
      limit: number,
      newest: boolean,
    ): Promise<{ messages: StoredMessage[]; more: boolean }> {
      if (upper < lower) return { messages: [], more: false };
      const rows = await selectMessages(db)
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('message_seq', '>=', lower)
        .where('message_seq', '<=', upper)
        .orderBy('message_seq', newest ? 'desc' : 'asc')
        .limit(limit + 1)
        .execute();
      const more = rows.length > limit;
      const page = (more ? rows.slice(0, limit) : rows).map((r) => toStored(r));
      if (newest) page.reverse();
      return { messages: page, more };
    },
  };
}

export type MessageRepository = ReturnType<typeof createMessageRepository>;

/** A message as the columns of `messages` that every dialect has (the embedded store adds `idem_hash`). */
export function messageRow(m: StoredMessage) {
  return {
    channel_id: m.channelId,
    channel_type: m.channelType,
    message_seq: m.messageSeq,
    message_id: m.messageId,
    client_msg_no: m.clientMsgNo,
    from_uid: m.fromUid,
    setting: m.setting,
    flags: m.flags,
    expire: m.expire,
    topic: m.topic,
    created_at: m.createdAt,
    payload: m.payload,
  };
}
