import type { PebbleDb } from '@parley/pebble';
import { hex8, u32, u64Dec, u64Num } from './hash.ts';

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

const text = new TextDecoder('utf-8', { fatal: true });
const str = (v: Uint8Array) => text.decode(v);
const b64 = (v: Uint8Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
const bool = (v: Uint8Array) => v.length > 0 && v[0] !== 0;
const ns = (v: Uint8Array) => (v.length >= 8 ? u64Dec(v, 0) : '0');

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

/** Row tables: table id → key length of a column key. */
const ROW_KEY_LENGTH: Record<number, number> = {
  0x0101: 22, 0x0201: 14, 0x0301: 14, 0x0401: 22, 0x0601: 14, 0x0701: 22, 0x0801: 22, 0x0901: 22, 0x0b01: 14, 0x1001: 14,
};

type Row = { table: number; prefix: Uint8Array; data: Record<string, unknown> };

function newRow(table: number, key: Uint8Array): Row {
  const prefix = key.slice(0, key.length - 2);
  const data: Record<string, unknown> = {};
  switch (table) {
    case 0x0101:
      Object.assign(data, { ch: hex8(key, 4), seq: u64Num(key, 12), header: 0, setting: 0, expire: 0, message_id: '0', column_seq: 0 });
      Object.assign(data, { client_msg_no: '', timestamp: 0, channel_id: '', channel_type: 0, topic: '', from_uid: '', payload: '', term: '0', stream_no: '' });
      break;
    case 0x0201:
      Object.assign(data, { uid: '', plugin_no: '', created_at_ns: '0', updated_at_ns: '0' });
      break;
    case 0x0301:
      Object.assign(data, { v2_device_id: u64Dec(key, 4), uid: '', token: '', device_flag: 0, device_level: 0, created_at_ns: '0', updated_at_ns: '0' });
      break;
    case 0x0401: case 0x0701: case 0x0801:
      Object.assign(data, { list: table === 0x0401 ? 'subscriber' : table === 0x0801 ? 'allow' : 'deny', ch: hex8(key, 4), uid: '', created_at_ns: '0', updated_at_ns: '0' });
      break;
    case 0x0601:
      Object.assign(data, { ch: hex8(key, 4), channel_id: '', channel_type: 0, ban: false, large: false, disband: false, send_ban: false, allow_stranger: false });
      Object.assign(data, { subscriber_count: 0, allowlist_count: 0, denylist_count: 0, created_at_ns: '0', updated_at_ns: '0' });
      break;
    case 0x0901:
      Object.assign(data, { v2_id: u64Dec(key, 12), uid: '', type: 0, channel_id: '', channel_type: 0, unread_count: 0, readed_to_msg_seq: 0 });
      Object.assign(data, { deleted_at_msg_seq: 0, created_at_ns: '0', updated_at_ns: '0' });
      break;
    case 0x0b01:
      Object.assign(data, { ch: hex8(key, 4), channel_id: '', channel_type: 0 });
      break;
  }
  return { table, prefix, data };
}

/** Column id → [field, decoder] per row table. */
const COLUMNS: Record<number, Record<number, [string, (v: Uint8Array) => unknown]>> = {
  0x0101: {
    0x0101: ['header', (v) => v[0] ?? 0], 0x0102: ['setting', (v) => v[0] ?? 0], 0x0103: ['expire', (v) => u32(v, 0)],
    0x0104: ['message_id', (v) => u64Dec(v, 0)], 0x0105: ['column_seq', (v) => u64Num(v, 0)], 0x0106: ['client_msg_no', str],
    0x0107: ['timestamp', (v) => u32(v, 0) | 0], 0x0108: ['channel_id', str], 0x0109: ['channel_type', (v) => v[0] ?? 0],
    0x010a: ['topic', str], 0x010b: ['from_uid', str], 0x010c: ['payload', b64], 0x010d: ['term', (v) => u64Dec(v, 0)],
    0x010e: ['stream_no', str],
  },
  0x0201: { 0x0201: ['uid', str], 0x0209: ['created_at_ns', ns], 0x020a: ['updated_at_ns', ns], 0x020b: ['plugin_no', str] },
  0x0301: {
    0x0301: ['uid', str], 0x0302: ['token', str], 0x0303: ['device_flag', (v) => u64Num(v, 0)], 0x0304: ['device_level', (v) => v[0] ?? 0],
    0x0305: ['created_at_ns', ns], 0x0306: ['updated_at_ns', ns],
  },
  0x0601: {
    0x0602: ['channel_id', str], 0x0603: ['channel_type', (v) => v[0] ?? 0], 0x0604: ['ban', bool], 0x0605: ['large', bool],
    0x0606: ['disband', bool], 0x0607: ['subscriber_count', (v) => u32(v, 0)], 0x0608: ['allowlist_count', (v) => u32(v, 0)],
    0x0609: ['denylist_count', (v) => u32(v, 0)], 0x060a: ['created_at_ns', ns], 0x060b: ['updated_at_ns', ns],
    0x060c: ['send_ban', bool], 0x060d: ['allow_stranger', bool],
  },
  0x0901: {
    0x0901: ['uid', str], 0x0902: ['channel_id', str], 0x0903: ['channel_type', (v) => v[0] ?? 0], 0x0904: ['type', (v) => v[0] ?? 0],
    0x0905: ['unread_count', (v) => u32(v, 0)], 0x0906: ['readed_to_msg_seq', (v) => u64Num(v, 0)], 0x0907: ['created_at_ns', ns],
    0x0908: ['updated_at_ns', ns], 0x0909: ['deleted_at_msg_seq', (v) => u64Num(v, 0)],
  },
  0x0b01: { 0x0b01: ['channel_id', str], 0x0b02: ['channel_type', (v) => v[0] ?? 0] },
  0x1001: { 0x1001: ['uid', str] },
};
for (const t of [0x0401, 0x0701, 0x0801]) {
  const hi = t >> 8;
  COLUMNS[t] = { [(hi << 8) | 1]: ['uid', str], [(hi << 8) | 2]: ['created_at_ns', ns], [(hi << 8) | 3]: ['updated_at_ns', ns] };
}
/** Columns that exist but carry nothing to migrate (legacy counters, declared ids, cluster details kept raw). */
const SILENT_COLUMNS = new Set([0x0202, 0x0203, 0x0204, 0x0205, 0x0206, 0x0207, 0x0208, 0x0601]);

function flush(row: Row, sink: ShardSink): void {
  const d = row.data;
  switch (row.table) {
    case 0x0101: sink.message(d as unknown as RawMessage); break;
    case 0x0201: sink.user(d as unknown as RawUser); break;
    case 0x0301: sink.device(d as unknown as RawDevice); break;
    case 0x0401: case 0x0701: case 0x0801: sink.member(d as unknown as RawMember); break;
    case 0x0601: sink.channelInfo(d as unknown as RawChannelInfo); break;
    case 0x0901: sink.conversation(d as unknown as RawConversation); break;
    case 0x0b01: sink.clusterConfig(d.ch as string, d.channel_id as string, d.channel_type as number); break;
    case 0x1001: sink.systemUid(d.uid as string); break;
  }
}

function samePrefix(prefix: Uint8Array, key: Uint8Array): boolean {
  if (key.length !== prefix.length + 2) return false;
  for (let i = prefix.length - 1; i >= 0; i--) if (prefix[i] !== key[i]) return false;
  return true;
}

/** Scans every live key of one shard. */
export function scanShard(db: PebbleDb, sink: ShardSink): { keys: number } {
  let row: Row | undefined;
  let keys = 0;
  for (const { key, value } of db.iterate()) {
    keys++;
    const table = ((key[0] ?? 0) << 8) | (key[1] ?? 0);
    const type = key[2];
    if (type === 1 && ROW_KEY_LENGTH[table] === key.length) {
      if (!row || row.table !== table || !samePrefix(row.prefix, key)) {
        if (row) flush(row, sink);
        row = newRow(table, key);
      }
      const col = (key[key.length - 2]! << 8) | key[key.length - 1]!;
      const spec = COLUMNS[table]![col];
      if (table === 0x0b01) sink.archived('cluster_config', key, value);
      if (spec) {
        try {
          row.data[spec[0]] = spec[1](value);
        } catch (err) {
          sink.problem('undecodable_column', key, (err as Error).message);
        }
      } else if (!SILENT_COLUMNS.has(col) && table !== 0x0b01) {
        sink.problem('unknown_column', key, `column ${col.toString(16).padStart(4, '0')} of table ${table.toString(16).padStart(4, '0')}`);
      }
      continue;
    }
    if (row) {
      flush(row, sink);
      row = undefined;
    }
    if (table === 0x0101 && type === 4 && key.length === 12) {
      sink.tail(hex8(key, 4), value.length >= 8 ? u64Num(value, 0) : 0, value.length >= 16 ? u64Dec(value, 8) : '0');
    } else if ((type === 2 || type === 3) && (ROW_KEY_LENGTH[table] !== undefined || table === 0x1601)) {
      continue; // secondary and unique indexes: rebuilt from rows
    } else if (ARCHIVED[table] !== undefined) {
      sink.archived(ARCHIVED[table], key, value);
    } else if (IGNORED.has(table)) {
      continue;
    } else if (LEGACY.has(table)) {
      sink.problem('legacy_stream_storage', key, `legacy stream table ${table.toString(16).padStart(4, '0')}`);
    } else {
      sink.problem('unknown_key', key, `table ${table.toString(16).padStart(4, '0')}, data type ${type}, length ${key.length}`);
    }
  }
  if (row) flush(row, sink);
  return { keys };
}
