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

/** The columns of a message row the checks read; a scan worker sends the others only inside the encoded tail. */
export type CheckedMessage = Pick<
  RawMessage,
  'ch' | 'seq' | 'column_seq' | 'header' | 'channel_id' | 'channel_type' | 'message_id' | 'from_uid' | 'client_msg_no' | 'stream_no'
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

const text = new TextDecoder('utf-8', { fatal: true });
// (empty columns are common: topic, stream no)
const str = (v: Uint8Array) => (v.length === 0 ? '' : text.decode(v));
const b64 = (v: Uint8Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
const bool = (v: Uint8Array) => v.length > 0 && v[0] !== 0;
const ns = (v: Uint8Array) => (v.length >= 8 ? u64Dec(v, 0) : '0');
const byte = (v: Uint8Array) => v[0] ?? 0;

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
    case 0x0101: case 0x0401: case 0x0701: case 0x0801: case 0x0901:
      return 22;
    case 0x0201: case 0x0301: case 0x0601: case 0x0b01: case 0x1001:
      return 14;
    default:
      return 0;
  }
}

/** Columns that exist but carry nothing to migrate (legacy counters, declared ids, cluster details kept raw). */
const SILENT_COLUMNS = new Set([0x0202, 0x0203, 0x0204, 0x0205, 0x0206, 0x0207, 0x0208, 0x0601]);

/** A row being assembled from its column keys; `data` has the record's fields in their final order. */
interface Row {
  table: number;
  data: RawMessage | RawUser | RawDevice | RawMember | RawChannelInfo | RawConversation | ClusterConfigRow | SystemUidRow;
}
interface ClusterConfigRow {
  ch: string;
  channel_id: string;
  channel_type: number;
}
interface SystemUidRow {
  uid?: string;
}

function newData(table: number, key: Uint8Array): Row['data'] {
  switch (table) {
    case 0x0101:
      return {
        ch: hex8(key, 4), seq: u64Num(key, 12), header: 0, setting: 0, expire: 0, message_id: '0', column_seq: 0, client_msg_no: '', timestamp: 0,
        channel_id: '', channel_type: 0, topic: '', from_uid: '', payload: '', term: '0', stream_no: '',
      } satisfies RawMessage;
    case 0x0201:
      return { uid: '', plugin_no: '', created_at_ns: '0', updated_at_ns: '0' } satisfies RawUser;
    case 0x0301:
      return { v2_device_id: u64Dec(key, 4), uid: '', token: '', device_flag: 0, device_level: 0, created_at_ns: '0', updated_at_ns: '0' } satisfies RawDevice;
    case 0x0401: case 0x0701: case 0x0801:
      return { list: table === 0x0401 ? 'subscriber' : table === 0x0801 ? 'allow' : 'deny', ch: hex8(key, 4), uid: '', created_at_ns: '0', updated_at_ns: '0' } satisfies RawMember;
    case 0x0601:
      return {
        ch: hex8(key, 4), channel_id: '', channel_type: 0, ban: false, large: false, disband: false, send_ban: false, allow_stranger: false,
        subscriber_count: 0, allowlist_count: 0, denylist_count: 0, created_at_ns: '0', updated_at_ns: '0',
      } satisfies RawChannelInfo;
    case 0x0901:
      return {
        v2_id: u64Dec(key, 12), uid: '', type: 0, channel_id: '', channel_type: 0, unread_count: 0, readed_to_msg_seq: 0, deleted_at_msg_seq: 0,
        created_at_ns: '0', updated_at_ns: '0',
      } satisfies RawConversation;
    case 0x0b01:
      return { ch: hex8(key, 4), channel_id: '', channel_type: 0 } satisfies ClusterConfigRow;
    default:
      return {} satisfies SystemUidRow;
  }
}

/**
 * Decodes column `col` of a row of `table` into `d`. Returns false for a
 * column the table does not have. Throws (string columns) on invalid UTF-8,
 * leaving the field as it was.
 */
function setColumn(table: number, d: Row['data'], col: number, v: Uint8Array): boolean {
  switch (table) {
    case 0x0101: {
      const m = d as RawMessage;
      switch (col) {
        case 0x0101: m.header = byte(v); return true;
        case 0x0102: m.setting = byte(v); return true;
        case 0x0103: m.expire = u32(v, 0); return true;
        case 0x0104: m.message_id = u64Dec(v, 0); return true;
        case 0x0105: m.column_seq = u64Num(v, 0); return true;
        case 0x0106: m.client_msg_no = str(v); return true;
        case 0x0107: m.timestamp = u32(v, 0) | 0; return true;
        case 0x0108: m.channel_id = str(v); return true;
        case 0x0109: m.channel_type = byte(v); return true;
        case 0x010a: m.topic = str(v); return true;
        case 0x010b: m.from_uid = str(v); return true;
        case 0x010c: m.payload = b64(v); return true;
        case 0x010d: m.term = u64Dec(v, 0); return true;
        case 0x010e: m.stream_no = str(v); return true;
      }
      return false;
    }
    case 0x0201: {
      const u = d as RawUser;
      switch (col) {
        case 0x0201: u.uid = str(v); return true;
        case 0x0209: u.created_at_ns = ns(v); return true;
        case 0x020a: u.updated_at_ns = ns(v); return true;
        case 0x020b: u.plugin_no = str(v); return true;
      }
      return false;
    }
    case 0x0301: {
      const r = d as RawDevice;
      switch (col) {
        case 0x0301: r.uid = str(v); return true;
        case 0x0302: r.token = str(v); return true;
        case 0x0303: r.device_flag = u64Num(v, 0); return true;
        case 0x0304: r.device_level = byte(v); return true;
        case 0x0305: r.created_at_ns = ns(v); return true;
        case 0x0306: r.updated_at_ns = ns(v); return true;
      }
      return false;
    }
    case 0x0401: case 0x0701: case 0x0801: {
      const m = d as RawMember;
      switch (col - (table & 0xff00)) {
        case 1: m.uid = str(v); return true;
        case 2: m.created_at_ns = ns(v); return true;
        case 3: m.updated_at_ns = ns(v); return true;
      }
      return false;
    }
    case 0x0601: {
      const c = d as RawChannelInfo;
      switch (col) {
        case 0x0602: c.channel_id = str(v); return true;
        case 0x0603: c.channel_type = byte(v); return true;
        case 0x0604: c.ban = bool(v); return true;
        case 0x0605: c.large = bool(v); return true;
        case 0x0606: c.disband = bool(v); return true;
        case 0x0607: c.subscriber_count = u32(v, 0); return true;
        case 0x0608: c.allowlist_count = u32(v, 0); return true;
        case 0x0609: c.denylist_count = u32(v, 0); return true;
        case 0x060a: c.created_at_ns = ns(v); return true;
        case 0x060b: c.updated_at_ns = ns(v); return true;
        case 0x060c: c.send_ban = bool(v); return true;
        case 0x060d: c.allow_stranger = bool(v); return true;
      }
      return false;
    }
    case 0x0901: {
      const c = d as RawConversation;
      switch (col) {
        case 0x0901: c.uid = str(v); return true;
        case 0x0902: c.channel_id = str(v); return true;
        case 0x0903: c.channel_type = byte(v); return true;
        case 0x0904: c.type = byte(v); return true;
        case 0x0905: c.unread_count = u32(v, 0); return true;
        case 0x0906: c.readed_to_msg_seq = u64Num(v, 0); return true;
        case 0x0907: c.created_at_ns = ns(v); return true;
        case 0x0908: c.updated_at_ns = ns(v); return true;
        case 0x0909: c.deleted_at_msg_seq = u64Num(v, 0); return true;
      }
      return false;
    }
    case 0x0b01: {
      const c = d as ClusterConfigRow;
      switch (col) {
        case 0x0b01: c.channel_id = str(v); return true;
        case 0x0b02: c.channel_type = byte(v); return true;
      }
      return false;
    }
    case 0x1001:
      if (col !== 0x1001) return false;
      (d as SystemUidRow).uid = str(v);
      return true;
  }
  return false;
}

function flush(row: Row, sink: ShardSink): void {
  const d = row.data;
  switch (row.table) {
    case 0x0101: sink.message(d as RawMessage); break;
    case 0x0201: sink.user(d as RawUser); break;
    case 0x0301: sink.device(d as RawDevice); break;
    case 0x0401: case 0x0701: case 0x0801: sink.member(d as RawMember); break;
    case 0x0601: sink.channelInfo(d as RawChannelInfo); break;
    case 0x0901: sink.conversation(d as RawConversation); break;
    case 0x0b01: { const c = d as ClusterConfigRow; sink.clusterConfig(c.ch, c.channel_id, c.channel_type); break; }
    case 0x1001: sink.systemUid((d as SystemUidRow).uid as string); break;
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
  for (const range of SCAN_RANGES) for (const { key, value, shared } of db.iterate(range)) {
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
