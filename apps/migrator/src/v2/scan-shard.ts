import { Buffer } from 'node:buffer';
import type { PebbleDb } from '@parley/pebble';
import { hex8, u64Dec, u64Num } from './hash.ts';
import { flush, newData, setColumn, SILENT_COLUMNS, type Row } from './row-columns.ts';

/**
 * One pass over one v2 business-DB shard (spec v2-storage §3): groups column
 * keys into rows, decodes them and hands them to a sink. Index entries are
 * skipped (rebuilt from rows); rows the migrator only archives are passed on
 * as raw key/value pairs.
 */

/** A message row as stored, keyed by channel hash `ch` (16 hex digits) and seq. */
export interface RawMessage {
  ch: string;
  seq: number;
  header: number;
  setting: number;
  expire: number;
  message_id: string;
  column_seq: number;
  client_msg_no: string;
  timestamp: number;
  channel_id: string;
  channel_type: number;
  topic: string;
  from_uid: string;
  payload: string;
  term: string;
  stream_no: string;
}

export interface RawMember {
  list: 'subscriber' | 'allow' | 'deny';
  ch: string;
  uid: string;
  created_at_ns: string;
  updated_at_ns: string;
}

export interface RawChannelInfo {
  ch: string;
  channel_id: string;
  channel_type: number;
  ban: boolean;
  large: boolean;
  disband: boolean;
  send_ban: boolean;
  allow_stranger: boolean;
  subscriber_count: number;
  allowlist_count: number;
  denylist_count: number;
  created_at_ns: string;
  updated_at_ns: string;
}

export interface RawDevice {
  v2_device_id: string;
  uid: string;
  token: string;
  device_flag: number;
  device_level: number;
  created_at_ns: string;
  updated_at_ns: string;
}

export interface RawUser {
  uid: string;
  plugin_no: string;
  created_at_ns: string;
  updated_at_ns: string;
}

export interface RawConversation {
  v2_id: string;
  uid: string;
  type: number;
  channel_id: string;
  channel_type: number;
  unread_count: number;
  readed_to_msg_seq: number;
  deleted_at_msg_seq: number;
  created_at_ns: string;
  updated_at_ns: string;
}

/** The columns of a message row the checks read; a scan worker sends the others only inside the encoded tail. */
export type CheckedMessage = Pick<
  RawMessage,
  | 'ch'
  | 'seq'
  | 'column_seq'
  | 'header'
  | 'channel_id'
  | 'channel_type'
  | 'message_id'
  | 'from_uid'
  | 'client_msg_no'
  | 'stream_no'
  | 'setting'
  | 'timestamp'
  | 'term'
>;

/** Receives the decoded content of one shard, in key order. */
export interface ShardSink {
  message(m: RawMessage): void;
  tail(ch: string, lastSeq: number, setTimeNs: string): void;
  user(u: RawUser): void;
  device(d: RawDevice): void;
  channelInfo(c: RawChannelInfo): void;
  member(m: RawMember): void;
  conversation(c: RawConversation): void;
  systemUid(uid: string): void;
  clusterConfig(ch: string, channelId: string, channelType: number): void;
  archived(kind: string, key: Uint8Array, value: Uint8Array): void;
  /** A key this release cannot carry: legacy stream tables, unknown tables or layouts, bad strings. */
  problem(kind: string, key: Uint8Array, detail: string): void;
}

/** Tables kept raw in the archive only (node-local, derived or not representable in Parley). */
const ARCHIVED: Record<number, string> = {
  0x0a01: 'notify_queue',
  0x0b01: 'cluster_config',
  0x0c01: 'leader_term',
  0x1501: 'plugin',
  0x1601: 'plugin_user',
  0x1901: 'message_event_state',
  0x1a01: 'message_event_seq',
};
/** Tables that are derived, counters or never written: skipped. */
const IGNORED = new Set([0x0501, 0x0d01, 0x0f01, 0x1301, 0x1401, 0x1801]);
const LEGACY = new Set([0x1101, 0x1201, 0x1701]);

/** Row tables: the key length of a column key, 0 for other tables. */
function rowKeyLength(table: number): number {
  switch (table) {
    case 0x0101:
    case 0x0401:
    case 0x0701:
    case 0x0801:
    case 0x0901:
      return 22;
    case 0x0201:
    case 0x0301:
    case 0x0601:
    case 0x0b01:
    case 0x1001:
      return 14;
    default:
      return 0;
  }
}

/** Whether a column key of the row's table (same table, data type and length) names the row whose key `rowKey` holds. */
function sameRow(rowKey: Uint8Array, key: Uint8Array): boolean {
  // bytes 0..2 (table and data type) are equal already; the row id's last bytes differ most often
  for (let i = key.length - 3; i >= 3; i--) if (rowKey[i] !== key[i]) return false;
  return true;
}

const hex4 = (n: number) => n.toString(16).padStart(4, '0');

/** Tables whose secondary and unique index entries (data types 2 and 3) the scan skips: rebuilt from rows. */
const INDEXED_TABLES = [0x0101, 0x0201, 0x0301, 0x0401, 0x0601, 0x0701, 0x0801, 0x0901, 0x0b01, 0x1001, 0x1601];

/**
 * The key ranges a shard scan reads: everything but the index entries of
 * `INDEXED_TABLES`, keys [table, 2, …] and [table, 3, …]. They make up about
 * a quarter of a shard's keys; the reader skips their blocks unread.
 */
const SCAN_RANGES: ReadonlyArray<{ start?: Uint8Array; end?: Uint8Array }> = (() => {
  const out: Array<{ start?: Uint8Array; end?: Uint8Array }> = [];
  let start: Uint8Array | undefined;
  for (const t of INDEXED_TABLES) {
    out.push({ start, end: Uint8Array.of(t >> 8, t & 0xff, 2) });
    start = Uint8Array.of(t >> 8, t & 0xff, 4);
  }
  out.push({ start });
  return out;
})();

/** Scans every live key of one shard but the index entries. `keys`: the keys read. */
export function scanShard(db: PebbleDb, sink: ShardSink): { keys: number } {
  let row: Row | undefined;
  /** The current row's key (row keys are 14 or 22 bytes, the last two name the column). */
  const rowKey = new Uint8Array(22);
  let keys = 0;
  for (const range of SCAN_RANGES)
    for (const { key, value, shared } of db.iterate(range)) {
      keys++;
      const table = ((key[0] ?? 0) << 8) | (key[1] ?? 0);
      const type = key[2];
      const rowLength = rowKeyLength(table);
      if (type === 1 && rowLength === key.length) {
        // the reader often knows the key repeats the previous one's row id (the previous key was this row's)
        if (!row || row.table !== table || (shared < key.length - 2 && !sameRow(rowKey, key))) {
          if (row) flush(row, sink);
          row = { table, data: newData(table, key) };
          rowKey.set(key);
        }
        const col = (key[key.length - 2]! << 8) | key[key.length - 1]!;
        if (table === 0x0b01) sink.archived('cluster_config', key, value);
        let known: boolean;
        try {
          known = setColumn(table, row.data, col, value);
        } catch (err) {
          sink.problem('undecodable_column', key, (err as Error).message);
          continue;
        }
        if (!known && !SILENT_COLUMNS.has(col) && table !== 0x0b01) {
          sink.problem('unknown_column', key, `column ${hex4(col)} of table ${hex4(table)}`);
        }
        continue;
      }
      if (row) {
        flush(row, sink);
        row = undefined;
      }
      if (table === 0x0101 && type === 4 && key.length === 12) {
        sink.tail(hex8(key, 4), value.length >= 8 ? u64Num(value, 0) : 0, value.length >= 16 ? u64Dec(value, 8) : '0');
      } else if ((type === 2 || type === 3) && (rowLength !== 0 || table === 0x1601)) {
        continue; // secondary and unique indexes: rebuilt from rows
      } else if (ARCHIVED[table] !== undefined) {
        sink.archived(ARCHIVED[table], key, value);
      } else if (IGNORED.has(table)) {
        continue;
      } else if (table === 0x1701) {
        sink.problem('legacy_stream_v2', key, 'legacy StreamV2 table 1701 (v2.2.1-v2.2.3 streams)');
      } else if (LEGACY.has(table)) {
        sink.problem('legacy_stream_storage', key, `legacy stream table ${hex4(table)}`);
      } else {
        sink.problem('unknown_key', key, `table ${hex4(table)}, data type ${type}, length ${key.length}`);
      }
    }
  if (row) flush(row, sink);
  return { keys };
}

/**
 * Hands a shard's last-seq keys to `sink.tail`, ahead of its scan: message
 * rows are checked against their channel's tail as they come.
 */
export function readTails(db: PebbleDb, sink: Pick<ShardSink, 'tail'>): void {
  for (const e of db.iterate({ start: Uint8Array.of(1, 1, 4, 0), end: Uint8Array.of(1, 1, 4, 1) })) {
    if (e.key.length === 12) sink.tail(hex8(e.key, 4), readSeq(e.value), readTime(e.value));
  }
}

function readSeq(v: Uint8Array): number {
  return v.length >= 8 ? Number(Buffer.from(v.subarray(0, 8)).readBigUInt64BE()) : 0;
}
function readTime(v: Uint8Array): string {
  return v.length >= 16 ? Buffer.from(v.subarray(8, 16)).readBigUInt64BE().toString() : '0';
}
