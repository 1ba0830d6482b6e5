import type { Db } from '../db.ts';
import type { Dialect } from '../dialect.ts';
import type { NewRow } from '../schema.ts';
import { idemHashOf } from '../sqlite/idem-hash.ts';

/** Rows per INSERT statement: at most 13 columns each, well under every dialect's parameter limit. */
const ROWS_PER_INSERT = 500;

async function inChunks<R>(rows: readonly R[], write: (part: R[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await write(rows.slice(i, i + ROWS_PER_INSERT));
}

/**
 * Bulk writes of whole rows into a new store, for `parleyctl migrate import`:
 * every column given, no upserts (a target starts empty, so a repeated key is
 * a bug that must fail the import). Rows are written in multi-row statements.
 * On SQLite every message also gets its idempotency hash (`sqlite/idem-hash.ts`).
 */
export function createImportRepository(db: Db, dialect: Dialect) {
  return {
    devices: (rows: readonly NewRow<'devices'>[]) => inChunks(rows, (part) => db.insertInto('devices').values(part).execute()),
    channels: (rows: readonly NewRow<'channels'>[]) => inChunks(rows, (part) => db.insertInto('channels').values(part).execute()),
    memberLists: (rows: readonly NewRow<'member_lists'>[]) =>
      inChunks(rows, (part) => db.insertInto('member_lists').values(part).execute()),
    systemUids: (uids: readonly string[]) =>
      inChunks(uids, (part) =>
        db
          .insertInto('system_uids')
          .values(part.map((uid) => ({ uid })))
          .execute(),
      ),
    messages: (rows: readonly NewRow<'messages'>[]) =>
      inChunks(rows, (part) =>
        db
          .insertInto('messages')
          .values(
            dialect === 'sqlite'
              ? part.map((r) => ({ ...r, idem_hash: idemHashOf(r.channel_id, Number(r.channel_type), r.from_uid, r.client_msg_no) }))
              : part,
          )
          .execute(),
      ),
    channelLogs: (rows: readonly NewRow<'channel_log'>[]) => inChunks(rows, (part) => db.insertInto('channel_log').values(part).execute()),
    memberships: (rows: readonly NewRow<'memberships'>[]) => inChunks(rows, (part) => db.insertInto('memberships').values(part).execute()),
    cmdBindings: (rows: readonly NewRow<'cmd_bindings'>[]) =>
      inChunks(rows, (part) => db.insertInto('cmd_bindings').values(part).execute()),
  };
}

export type ImportRepository = ReturnType<typeof createImportRepository>;
