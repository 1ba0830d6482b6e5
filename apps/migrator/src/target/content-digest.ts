import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';

/**
 * Every table of the Parley store in primary-key order, with its columns:
 * the content fingerprint of a target covers exactly these.
 */
export const TABLES: Array<{ table: string; columns: string[]; order: string }> = [
  {
    table: 'devices',
    columns: ['uid', 'device_flag', 'device_level', 'device_id', 'token_sha256', 'updated_at'],
    order: 'uid, device_flag',
  },
  {
    table: 'channels',
    columns: ['channel_id', 'channel_type', 'ban', 'disband', 'large', 'send_ban', 'allow_stranger', 'created_at', 'updated_at'],
    order: 'channel_id, channel_type',
  },
  {
    table: 'memberships',
    columns: [
      'channel_id',
      'channel_type',
      'uid',
      'join_seq',
      'read_seq',
      'deleted_to_seq',
      'activated_at',
      'last_send_seq',
      'removed',
      'unread_count',
      'updated_at',
    ],
    order: 'channel_id, channel_type, uid',
  },
  { table: 'member_lists', columns: ['channel_id', 'channel_type', 'list', 'uid'], order: 'channel_id, channel_type, list, uid' },
  {
    table: 'messages',
    columns: [
      'channel_id',
      'channel_type',
      'message_seq',
      'message_id',
      'client_msg_no',
      'from_uid',
      'setting',
      'flags',
      'expire',
      'topic',
      'created_at',
      'payload',
    ],
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

/**
 * SHA-256 over every row of every table in key order; also the row count per
 * table. Each row is hashed as its cells, tab-separated, newline-terminated:
 * `i:<integer>`, `s:<JSON string>`, and for bytes `b:<length>:` followed by
 * the bytes themselves (no text encoding of payloads). Text is handed to the
 * hash in chunks of rows.
 */
export function contentDigest(db: Database.Database): { sha256: string; rows: Record<string, number> } {
  const hash = createHash('sha256');
  const rows: Record<string, number> = {};
  let text = '';
  const flush = () => {
    if (text !== '') hash.update(text);
    text = '';
  };
  for (const t of TABLES) {
    const stmt = db
      .prepare(`select ${t.columns.join(', ')} from ${t.table} order by ${t.order}`)
      .raw(true)
      .safeIntegers(true);
    let n = 0;
    text += `#${t.table}\n`;
    for (const row of stmt.iterate() as Iterable<unknown[]>) {
      for (let i = 0; i < row.length; i++) {
        const v = row[i];
        if (i > 0) text += '\t';
        if (v instanceof Uint8Array) {
          text += `b:${v.byteLength}:`;
          flush();
          hash.update(v);
        } else if (typeof v === 'bigint' || typeof v === 'number') text += `i:${v}`;
        else text += `s:${JSON.stringify(v)}`;
      }
      text += '\n';
      if (text.length > 1 << 16) flush();
      n++;
    }
    rows[t.table] = n;
  }
  flush();
  return { sha256: hash.digest('hex'), rows };
}
