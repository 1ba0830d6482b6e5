import type { Database } from './schema.ts';

/** A table the store keeps, with its columns in schema order and its primary key. */
export interface TableSpec<T extends keyof Database = keyof Database> {
  table: T;
  columns: ReadonlyArray<keyof Database[T] & string>;
  key: ReadonlyArray<keyof Database[T] & string>;
}

function spec<T extends keyof Database>(
  table: T,
  columns: ReadonlyArray<keyof Database[T] & string>,
  key: ReadonlyArray<keyof Database[T] & string>,
): TableSpec<T> {
  return { table, columns, key };
}

/** The columns of a message after its key and id, in table order. */
export const MESSAGE_BODY_COLUMNS = ['client_msg_no', 'from_uid', 'setting', 'flags', 'expire', 'topic', 'created_at', 'payload'] as const;

/**
 * The tables a migrated store is made of, each with every column (checked
 * against the schema) and its primary key: the content fingerprint and the
 * migrator's read-back cover exactly these, in key order.
 */
export const CONTENT_TABLES = [
  spec('devices', ['uid', 'device_flag', 'device_level', 'device_id', 'token_sha256', 'updated_at'], ['uid', 'device_flag']),
  spec(
    'channels',
    ['channel_id', 'channel_type', 'ban', 'disband', 'large', 'send_ban', 'allow_stranger', 'created_at', 'updated_at'],
    ['channel_id', 'channel_type'],
  ),
  spec(
    'memberships',
    [
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
    ['channel_id', 'channel_type', 'uid'],
  ),
  spec('member_lists', ['channel_id', 'channel_type', 'list', 'uid'], ['channel_id', 'channel_type', 'list', 'uid']),
  spec(
    'messages',
    ['channel_id', 'channel_type', 'message_seq', 'message_id', ...MESSAGE_BODY_COLUMNS],
    ['channel_id', 'channel_type', 'message_seq'],
  ),
  spec('channel_log', ['channel_id', 'channel_type', 'tail_seq'], ['channel_id', 'channel_type']),
  spec('system_uids', ['uid'], ['uid']),
  spec(
    'cmd_bindings',
    ['uid', 'channel_id', 'channel_type', 'start_seq', 'ack_seq', 'removed', 'updated_at'],
    ['uid', 'channel_id', 'channel_type'],
  ),
] as const;

/** The names of `CONTENT_TABLES`. */
export type ContentTable = (typeof CONTENT_TABLES)[number]['table'];

/** Columns holding 64-bit ids: read as text, so they never pass through a JS number. */
export const ID_COLUMNS: ReadonlySet<string> = new Set(['message_id']);
