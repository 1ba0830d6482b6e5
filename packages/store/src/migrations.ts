import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Dialect } from './dialect.ts';
import { idemHash } from './sqlite/idem-hash.ts';

/** Rows read and rewritten per statement while `0005_sqlite_idem_hash` fills the hash of existing messages. */
const FILL_CHUNK = 500;

function migrations(dialect: Dialect): Record<string, Migration> {
  const bytes = dialect === 'postgres' ? 'bytea' : 'blob';
  // PostgreSQL text compares by the database's collation unless told otherwise; "C" compares
  // bytes as SQLite does, so key order (read-back, fingerprints, directory pages) is the same.
  const text = dialect === 'postgres' ? sql.raw('text collate "C"') : 'text';
  return {
    '0001_core': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('devices')
          .addColumn('uid', text, (c) => c.notNull())
          .addColumn('device_flag', 'integer', (c) => c.notNull())
          .addColumn('device_level', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('device_id', text, (c) => c.notNull().defaultTo(''))
          .addColumn('token_sha256', text, (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('devices_pk', ['uid', 'device_flag'])
          .execute();
        await db.schema
          .createTable('channels')
          .addColumn('channel_id', text, (c) => c.notNull())
          .addColumn('channel_type', 'integer', (c) => c.notNull())
          .addColumn('ban', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('disband', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('large', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('send_ban', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('allow_stranger', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('channels_pk', ['channel_id', 'channel_type'])
          .execute();
        await db.schema
          .createTable('memberships')
          .addColumn('channel_id', text, (c) => c.notNull())
          .addColumn('channel_type', 'integer', (c) => c.notNull())
          .addColumn('uid', text, (c) => c.notNull())
          .addColumn('join_seq', 'bigint', (c) => c.notNull().defaultTo(1))
          .addColumn('read_seq', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('deleted_to_seq', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('activated_at', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('last_send_seq', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('removed', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('memberships_pk', ['channel_id', 'channel_type', 'uid'])
          .execute();
        await db.schema.createIndex('memberships_by_uid').on('memberships').columns(['uid', 'activated_at']).execute();
        await db.schema
          .createTable('member_lists')
          .addColumn('channel_id', text, (c) => c.notNull())
          .addColumn('channel_type', 'integer', (c) => c.notNull())
          .addColumn('list', text, (c) => c.notNull())
          .addColumn('uid', text, (c) => c.notNull())
          .addPrimaryKeyConstraint('member_lists_pk', ['channel_id', 'channel_type', 'list', 'uid'])
          .execute();
        await db.schema
          .createTable('messages')
          .addColumn('channel_id', text, (c) => c.notNull())
          .addColumn('channel_type', 'integer', (c) => c.notNull())
          .addColumn('message_seq', 'bigint', (c) => c.notNull())
          .addColumn('message_id', 'bigint', (c) => c.notNull())
          .addColumn('client_msg_no', text, (c) => c.notNull())
          .addColumn('from_uid', text, (c) => c.notNull())
          .addColumn('setting', 'integer', (c) => c.notNull())
          .addColumn('flags', 'integer', (c) => c.notNull())
          .addColumn('expire', 'bigint', (c) => c.notNull())
          .addColumn('topic', text, (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('payload', sql.raw(bytes), (c) => c.notNull())
          .addPrimaryKeyConstraint('messages_pk', ['channel_id', 'channel_type', 'message_seq'])
          .execute();
        await db.schema.createIndex('messages_by_id').on('messages').column('message_id').execute();
        await db.schema
          .createIndex('messages_by_client_msg_no')
          .on('messages')
          .columns(['channel_id', 'channel_type', 'from_uid', 'client_msg_no'])
          .where(sql.ref('client_msg_no'), '<>', '')
          .execute();
        await db.schema
          .createTable('channel_log')
          .addColumn('channel_id', text, (c) => c.notNull())
          .addColumn('channel_type', 'integer', (c) => c.notNull())
          .addColumn('tail_seq', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('channel_log_pk', ['channel_id', 'channel_type'])
          .execute();
        await db.schema
          .createTable('system_uids')
          .addColumn('uid', text, (c) => c.primaryKey())
          .execute();
        await db.schema
          .createTable('meta')
          .addColumn('key', text, (c) => c.primaryKey())
          .addColumn('value', text, (c) => c.notNull())
          .execute();
      },
    },
    '0002_conversation_unread': {
      // v2 conversations carry a manually set unread count; migrated data keeps it per membership.
      async up(db: Kysely<unknown>) {
        await db.schema
          .alterTable('memberships')
          .addColumn('unread_count', 'bigint', (c) => c.notNull().defaultTo(0))
          .execute();
      },
    },
    '0003_cmd_bindings_and_events': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('cmd_bindings')
          .addColumn('uid', text, (c) => c.notNull())
          .addColumn('channel_id', text, (c) => c.notNull())
          .addColumn('channel_type', 'integer', (c) => c.notNull())
          .addColumn('start_seq', 'bigint', (c) => c.notNull())
          .addColumn('ack_seq', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('removed', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('cmd_bindings_pk', ['uid', 'channel_id', 'channel_type'])
          .execute();
        await db.schema
          .createTable('message_events')
          .addColumn('channel_id', text, (c) => c.notNull())
          .addColumn('channel_type', 'integer', (c) => c.notNull())
          .addColumn('client_msg_no', text, (c) => c.notNull())
          .addColumn('event_seq', 'bigint', (c) => c.notNull())
          .addColumn('event_id', text, (c) => c.notNull())
          .addColumn('event_key', text, (c) => c.notNull())
          .addColumn('event_type', text, (c) => c.notNull())
          .addColumn('from_uid', text, (c) => c.notNull())
          .addColumn('message_id', 'bigint', (c) => c.notNull())
          .addColumn('visibility', text, (c) => c.notNull())
          .addColumn('occurred_at', 'bigint', (c) => c.notNull())
          .addColumn('payload', text, (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('message_events_pk', ['channel_id', 'channel_type', 'client_msg_no', 'event_seq'])
          .execute();
        await db.schema
          .createIndex('message_events_by_id')
          .on('message_events')
          .columns(['channel_id', 'channel_type', 'client_msg_no', 'event_id'])
          .unique()
          .execute();
      },
    },
    '0004_cluster': {
      // Cluster mode (PostgreSQL): who owns each physical slot, under which epoch, until when;
      // the nodes of the cluster. SQLite keeps the same tables so the repositories run on both.
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('slot_leases')
          .addColumn('slot', 'integer', (c) => c.primaryKey())
          .addColumn('owner', 'integer')
          .addColumn('epoch', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('expires_at', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('cluster_nodes')
          .addColumn('node_id', 'integer', (c) => c.primaryKey())
          .addColumn('addresses', text, (c) => c.notNull())
          .addColumn('started_at', 'bigint', (c) => c.notNull())
          .addColumn('last_seen', 'bigint', (c) => c.notNull())
          .addColumn('state_revision', 'bigint', (c) => c.notNull().defaultTo(0))
          .execute();
      },
    },
    // SQLite only: PostgreSQL keeps its index on the four columns.
    ...(dialect === 'sqlite' ? { '0005_sqlite_idem_hash': { up: sqliteIdemHash } } : {}),
    // SQLite only: the writer thread's latest-send marks between a commit and their application
    // to `memberships` (sqlite/writer-thread.ts). PostgreSQL updates the memberships in the append.
    ...(dialect === 'sqlite'
      ? {
          '0006_sqlite_pending_marks': {
            async up(db: Kysely<unknown>) {
              await db.schema
                .createTable('pending_marks')
                .ifNotExists()
                .addColumn('channel_id', 'text', (c) => c.notNull())
                .addColumn('channel_type', 'integer', (c) => c.notNull())
                .addColumn('uid', 'text', (c) => c.notNull())
                .addColumn('seq', 'integer', (c) => c.notNull())
                .execute();
            },
          },
        }
      : {}),
  };
}

/**
 * The embedded store's idempotency index on one 64-bit hash of the key
 * (`sqlite/idem-hash.ts`) instead of on its four text columns: a smaller
 * index, so an append dirties fewer pages. Fills the hash of every existing
 * message that has a client_msg_no. SQLite runs kysely's migrations outside a
 * transaction: this one runs in its own, and every step can run again, so an
 * interrupted migration is simply repeated.
 */
async function sqliteIdemHash(db: Kysely<unknown>): Promise<void> {
  await sql.raw('begin immediate').execute(db);
  try {
    const { rows: columns } = await sql<{ name: string }>`select name from pragma_table_info('messages')`.execute(db);
    if (!columns.some((c) => c.name === 'idem_hash')) await sql.raw('alter table messages add column idem_hash integer').execute(db);
    await sql.raw('drop index if exists messages_by_client_msg_no').execute(db);
    for (let after = -1; ;) {
      const { rows } = await sql<{ rid: number; channel_id: string; channel_type: number; from_uid: string; client_msg_no: string }>`
        select rowid as rid, channel_id, channel_type, from_uid, client_msg_no from messages
        where rowid > ${after} and client_msg_no <> '' and idem_hash is null order by rowid limit ${FILL_CHUNK}`.execute(db);
      if (rows.length === 0) break;
      const values = sql.join(
        rows.map((r) => sql`(${r.rid}, ${idemHash(r.channel_id, Number(r.channel_type), r.from_uid, r.client_msg_no)})`),
      );
      await sql`update messages set idem_hash = v.h from (select column1 as rid, column2 as h from (values ${values})) as v
        where messages.rowid = v.rid`.execute(db);
      after = rows[rows.length - 1]!.rid;
    }
    await sql.raw(`create index if not exists messages_by_idem_hash on messages (idem_hash) where client_msg_no <> ''`).execute(db);
    await sql.raw('commit').execute(db);
  } catch (err) {
    await sql.raw('rollback').execute(db);
    throw err;
  }
}

/** Migrations shipped in code, applied in name order. */
export function migrationProvider(dialect: Dialect): MigrationProvider {
  return { getMigrations: async () => migrations(dialect) };
}
