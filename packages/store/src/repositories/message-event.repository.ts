import { sql, type InferResult } from 'kysely';
import type { Db } from '../db.ts';
import type { Dialect } from '../dialect.ts';
import { isUniqueViolation } from '../errors.ts';

export interface MessageEvent {
  channelId: string;
  channelType: number;
  clientMsgNo: string;
  eventSeq: number;
  eventId: string;
  eventKey: string;
  eventType: string;
  fromUid: string;
  messageId: bigint;
  visibility: string;
  occurredAt: number;
  /** Raw JSON text. */
  payload: string;
  createdAt: number;
}

/** Attempts of one append when another writer took the same event seq or id (not expected under the lock below). */
const APPEND_ATTEMPTS = 5;

/**
 * Stream events of messages, numbered 1, 2, 3 … per message; idempotent by event id. The
 * embedded store appends through its writer thread instead (`SqliteWriter.appendEvent`, the
 * same rules); this `append` serves PostgreSQL and the in-memory store.
 */
export function createMessageEventRepository(db: Db, dialect: Dialect = 'sqlite') {
  const columns = [
    'channel_id',
    'channel_type',
    'client_msg_no',
    'event_seq',
    'event_id',
    'event_key',
    'event_type',
    'from_uid',
    sql<string>`cast(message_id as text)`.as('message_id_text'),
    'visibility',
    'occurred_at',
    'payload',
    'created_at',
  ] as const;
  const selectEvents = (q: Db) => q.selectFrom('message_events').select(columns);
  type Row = InferResult<ReturnType<typeof selectEvents>>[number];
  const toEvent = (r: Row): MessageEvent => ({
    channelId: r.channel_id,
    channelType: Number(r.channel_type),
    clientMsgNo: r.client_msg_no,
    eventSeq: Number(r.event_seq),
    eventId: r.event_id,
    eventKey: r.event_key,
    eventType: r.event_type,
    fromUid: r.from_uid,
    messageId: BigInt(r.message_id_text),
    visibility: r.visibility,
    occurredAt: Number(r.occurred_at),
    payload: r.payload,
    createdAt: Number(r.created_at),
  });

  const appendOnce = (e: Omit<MessageEvent, 'eventSeq' | 'createdAt'>): Promise<MessageEvent> =>
    db.transaction().execute(async (trx) => {
      // PostgreSQL: appenders of one message (other connections, other nodes) queue on a
      // transaction-scoped advisory lock, so the max(event_seq) read below is never raced.
      // SQLite has one writer at a time already.
      if (dialect === 'postgres')
        await sql`select pg_advisory_xact_lock(hashtextextended(${`${e.channelType}:${e.channelId}:${e.clientMsgNo}`}, 0))`.execute(trx);
      const found = await selectEvents(trx)
        .where('channel_id', '=', e.channelId)
        .where('channel_type', '=', e.channelType)
        .where('client_msg_no', '=', e.clientMsgNo)
        .where('event_id', '=', e.eventId)
        .executeTakeFirst();
      if (found) return toEvent(found);
      const top = await trx
        .selectFrom('message_events')
        .select((eb) => eb.fn.max('event_seq').as('top'))
        .where('channel_id', '=', e.channelId)
        .where('channel_type', '=', e.channelType)
        .where('client_msg_no', '=', e.clientMsgNo)
        .executeTakeFirst();
      const stored: MessageEvent = { ...e, eventSeq: Number(top?.top ?? 0) + 1, createdAt: Date.now() };
      await trx
        .insertInto('message_events')
        .values({
          channel_id: stored.channelId,
          channel_type: stored.channelType,
          client_msg_no: stored.clientMsgNo,
          event_seq: stored.eventSeq,
          event_id: stored.eventId,
          event_key: stored.eventKey,
          event_type: stored.eventType,
          from_uid: stored.fromUid,
          message_id: stored.messageId,
          visibility: stored.visibility,
          occurred_at: stored.occurredAt,
          payload: stored.payload,
          created_at: stored.createdAt,
        })
        .execute();
      return stored;
    });

  return {
    /**
     * Appends an event unless one with its id exists; returns the stored event
     * (the earlier one on a repeat).
     */
    async append(e: Omit<MessageEvent, 'eventSeq' | 'createdAt'>): Promise<MessageEvent> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await appendOnce(e);
        } catch (err) {
          // Another writer appended to the same message between our read and insert: read again.
          if (attempt >= APPEND_ATTEMPTS || !isUniqueViolation(err)) throw err;
        }
      }
    },

    /** Events of one message with `event_seq > after`, oldest first, at most `limit`. */
    async list(channelId: string, channelType: number, clientMsgNo: string, after: number, limit: number): Promise<MessageEvent[]> {
      const rows = await selectEvents(db)
        .where('channel_id', '=', channelId)
        .where('channel_type', '=', channelType)
        .where('client_msg_no', '=', clientMsgNo)
        .where('event_seq', '>', after)
        .orderBy('event_seq')
        .limit(limit)
        .execute();
      return rows.map(toEvent);
    },
  };
}

export type MessageEventRepository = ReturnType<typeof createMessageEventRepository>;
