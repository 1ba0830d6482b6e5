import { sql } from 'kysely';
import type { Db } from '../db.ts';
import type { Database, Row } from '../schema.ts';
import { CONTENT_TABLES, ID_COLUMNS, type ContentTable } from '../tables.ts';

/** Rows read per statement when scanning a table. */
const PAGE_ROWS = 4096;

function specOf(table: ContentTable) {
  const s = CONTENT_TABLES.find((t) => t.table === table);
  if (!s) throw new Error(`not a content table: ${table}`);
  return s;
}

/** Every column of a content table, 64-bit ids cast to text. */
function columnsOf(table: ContentTable) {
  return sql.join(specOf(table).columns.map((c) => (ID_COLUMNS.has(c) ? sql`cast(${sql.ref(c)} as text) as ${sql.ref(c)}` : sql.ref(c))));
}

/**
 * Reads a store back whole, in primary-key order and in pages (no cursor is
 * held open between pages): the migrator's field-by-field verification and
 * the content fingerprint. Nothing here writes.
 */
export function createSnapshotRepository(db: Db) {
  return {
    /** Rows of `table`. */
    async count(table: keyof Database): Promise<number> {
      const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db);
      return Number(rows[0]?.n ?? 0);
    },

    /** Every row of `table` in key order, a page at a time. */
    async *scan<T extends ContentTable>(table: T): AsyncGenerator<Row<T>[]> {
      const s = specOf(table);
      const columns = sql.join(s.columns.map((c) => (ID_COLUMNS.has(c) ? sql`cast(${sql.ref(c)} as text) as ${sql.ref(c)}` : sql.ref(c))));
      const key = sql.join(s.key.map((c) => sql.ref(c)));
      let after: unknown[] | undefined;
      for (;;) {
        const where = after ? sql`where (${key}) > (${sql.join(after)})` : sql``;
        const { rows } = await sql<Row<T>>`select ${columns} from ${sql.table(table)} ${where} order by ${key} limit ${PAGE_ROWS}`.execute(
          db,
        );
        if (rows.length > 0) yield rows;
        if (rows.length < PAGE_ROWS) return;
        const last = rows.at(-1) as Record<string, unknown>;
        after = s.key.map((k) => last[k]);
      }
    },

    /** Up to `limit` messages of one channel with `message_seq > afterSeq`, in seq order; ids as text. */
    async channelMessages(channelId: string, channelType: number, afterSeq: number, limit: number): Promise<Row<'messages'>[]> {
      const { rows } = await sql<Row<'messages'>>`select ${columnsOf('messages')} from messages
        where channel_id = ${channelId} and channel_type = ${channelType} and message_seq > ${afterSeq}
        order by message_seq limit ${limit}`.execute(db);
      return rows;
    },

    /** Per channel holding messages: its highest seq and how many it holds. */
    async channelStats(): Promise<Array<{ channel_id: string; channel_type: number; max_seq: number; messages: number }>> {
      const rows = await db
        .selectFrom('messages')
        .select((eb) => ['channel_id', 'channel_type', eb.fn.max('message_seq').as('max_seq'), eb.fn.countAll().as('messages')])
        .groupBy(['channel_id', 'channel_type'])
        .execute();
      return rows.map((r) => ({
        channel_id: r.channel_id,
        channel_type: Number(r.channel_type),
        max_seq: Number(r.max_seq),
        messages: Number(r.messages),
      }));
    },

    /** Message ids stored more than once (at most `limit`), with their counts: one pass over the id index. */
    async repeatedMessageIds(limit: number): Promise<Array<{ id: string; n: number }>> {
      const rows = await db
        .selectFrom('messages')
        .select((eb) => [sql<string>`cast(message_id as text)`.as('id'), eb.fn.countAll().as('n')])
        .groupBy('message_id')
        .having((eb) => eb.fn.countAll(), '>', 1)
        .limit(limit)
        .execute();
      return rows.map((r) => ({ id: r.id, n: Number(r.n) }));
    },
  };
}

export type SnapshotRepository = ReturnType<typeof createSnapshotRepository>;
