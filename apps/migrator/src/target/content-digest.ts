import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';

/**
 * Every table of the Parley store in primary-key order, with its columns:
 * the content fingerprint of a target covers exactly these.
 */
export const TABLES: Array<{ table: string; columns: string[]; order: string }> = [
  { table: 'devices', columns: ['uid', 'device_flag', 'device_level', 'device_id', 'token_sha256', 'updated_at'], order: 'uid, device_flag' },
  {
    table: 'channels',
    columns: ['channel_id', 'channel_type', 'ban', 'disband', 'large', 'send_ban', 'allow_stranger', 'created_at', 'updated_at'],
    order: 'channel_id, channel_type',
  },
  {
    table: 'memberships',
    columns: ['channel_id', 'channel_type', 'uid', 'join_seq', 'read_seq', 'deleted_to_seq', 'activated_at', 'last_send_seq', 'removed', 'unread_count', 'updated_at'],
    order: 'channel_id, channel_type, uid',
  },
  { table: 'member_lists', columns: ['channel_id', 'channel_type', 'list', 'uid'], order: 'channel_id, channel_type, list, uid' },
  {
    table: 'messages',
    columns: ['channel_id', 'channel_type', 'message_seq', 'message_id', 'client_msg_no', 'from_uid', 'setting', 'flags', 'expire', 'topic', 'created_at', 'payload'],
    order: 'channel_id, channel_type, message_seq',
  },
  { table: 'channel_log', columns: ['channel_id', 'channel_type', 'tail_seq'], order: 'channel_id, channel_type' },
  { table: 'system_uids', columns: ['uid'], order: 'uid' },
  {
    table: 'cmd_bindings',
    columns: ['uid', 'channel_id', 'channel_type', 'start_seq', 'ack_seq', 'removed', 'updated_at'],
    order: 'uid, channel_id, channel_type',
  },
];

function cell(v: unknown): string {
  if (v instanceof Uint8Array) return `b:${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')}`;
  if (typeof v === 'bigint') return `i:${v}`;
  if (typeof v === 'number') return `i:${v}`;
  return `s:${JSON.stringify(v)}`;
}

/** SHA-256 over every row of every table in key order; also the row count per table. */
export function contentDigest(db: Database.Database): { sha256: string; rows: Record<string, number> } {
  const hash = createHash('sha256');
  const rows: Record<string, number> = {};
  for (const t of TABLES) {
    const stmt = db.prepare(`select ${t.columns.join(', ')} from ${t.table} order by ${t.order}`).raw(true).safeIntegers(true);
    let n = 0;
    hash.update(`#${t.table}\n`);
    for (const row of stmt.iterate() as Iterable<unknown[]>) {
      hash.update(`${row.map(cell).join('\t')}\n`);
      n++;
    }
    rows[t.table] = n;
  }
  return { sha256: hash.digest('hex'), rows };
}
