import { Buffer } from 'node:buffer';
import { hex8, u32, u64Dec, u64Num } from './hash.ts';
import type { RawChannelInfo, RawConversation, RawDevice, RawMember, RawMessage, RawUser, ShardSink } from './scan-shard.ts';

/**
 * The columns of v2's row tables (spec v2-storage §3): a row's record with
 * its fields in their final order, each column decoded into it, and the row
 * handed to the sink once complete. The shard scan (`scan-shard.ts`) groups
 * column keys into rows and calls these.
 */

const text = new TextDecoder('utf-8', { fatal: true });
// (empty columns are common: topic, stream no)
const str = (v: Uint8Array) => (v.length === 0 ? '' : text.decode(v));
const b64 = (v: Uint8Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
const bool = (v: Uint8Array) => v.length > 0 && v[0] !== 0;
const ns = (v: Uint8Array) => (v.length >= 8 ? u64Dec(v, 0) : '0');
const byte = (v: Uint8Array) => v[0] ?? 0;

/** Columns that exist but carry nothing to migrate (legacy counters, declared ids, cluster details kept raw). */
export const SILENT_COLUMNS = new Set([0x0202, 0x0203, 0x0204, 0x0205, 0x0206, 0x0207, 0x0208, 0x0601]);

/** A row being assembled from its column keys; `data` has the record's fields in their final order. */
export interface Row {
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

export function newData(table: number, key: Uint8Array): Row['data'] {
  switch (table) {
    case 0x0101:
      return {
        ch: hex8(key, 4),
        seq: u64Num(key, 12),
        header: 0,
        setting: 0,
        expire: 0,
        message_id: '0',
        column_seq: 0,
        client_msg_no: '',
        timestamp: 0,
        channel_id: '',
        channel_type: 0,
        topic: '',
        from_uid: '',
        payload: '',
        term: '0',
        stream_no: '',
      } satisfies RawMessage;
    case 0x0201:
      return { uid: '', plugin_no: '', created_at_ns: '0', updated_at_ns: '0' } satisfies RawUser;
    case 0x0301:
      return {
        v2_device_id: u64Dec(key, 4),
        uid: '',
        token: '',
        device_flag: 0,
        device_level: 0,
        created_at_ns: '0',
        updated_at_ns: '0',
      } satisfies RawDevice;
    case 0x0401:
    case 0x0701:
    case 0x0801:
      return {
        list: table === 0x0401 ? 'subscriber' : table === 0x0801 ? 'allow' : 'deny',
        ch: hex8(key, 4),
        uid: '',
        created_at_ns: '0',
        updated_at_ns: '0',
      } satisfies RawMember;
    case 0x0601:
      return {
        ch: hex8(key, 4),
        channel_id: '',
        channel_type: 0,
        ban: false,
        large: false,
        disband: false,
        send_ban: false,
        allow_stranger: false,
        subscriber_count: 0,
        allowlist_count: 0,
        denylist_count: 0,
        created_at_ns: '0',
        updated_at_ns: '0',
      } satisfies RawChannelInfo;
    case 0x0901:
      return {
        v2_id: u64Dec(key, 12),
        uid: '',
        type: 0,
        channel_id: '',
        channel_type: 0,
        unread_count: 0,
        readed_to_msg_seq: 0,
        deleted_at_msg_seq: 0,
        created_at_ns: '0',
        updated_at_ns: '0',
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
export function setColumn(table: number, d: Row['data'], col: number, v: Uint8Array): boolean {
  switch (table) {
    case 0x0101: {
      const m = d as RawMessage;
      switch (col) {
        case 0x0101:
          m.header = byte(v);
          return true;
        case 0x0102:
          m.setting = byte(v);
          return true;
        case 0x0103:
          m.expire = u32(v, 0);
          return true;
        case 0x0104:
          m.message_id = u64Dec(v, 0);
          return true;
        case 0x0105:
          m.column_seq = u64Num(v, 0);
          return true;
        case 0x0106:
          m.client_msg_no = str(v);
          return true;
        case 0x0107:
          m.timestamp = u32(v, 0) | 0;
          return true;
        case 0x0108:
          m.channel_id = str(v);
          return true;
        case 0x0109:
          m.channel_type = byte(v);
          return true;
        case 0x010a:
          m.topic = str(v);
          return true;
        case 0x010b:
          m.from_uid = str(v);
          return true;
        case 0x010c:
          m.payload = b64(v);
          return true;
        case 0x010d:
          m.term = u64Dec(v, 0);
          return true;
        case 0x010e:
          m.stream_no = str(v);
          return true;
      }
      return false;
    }
    case 0x0201: {
      const u = d as RawUser;
      switch (col) {
        case 0x0201:
          u.uid = str(v);
          return true;
        case 0x0209:
          u.created_at_ns = ns(v);
          return true;
        case 0x020a:
          u.updated_at_ns = ns(v);
          return true;
        case 0x020b:
          u.plugin_no = str(v);
          return true;
      }
      return false;
    }
    case 0x0301: {
      const r = d as RawDevice;
      switch (col) {
        case 0x0301:
          r.uid = str(v);
          return true;
        case 0x0302:
          r.token = str(v);
          return true;
        case 0x0303:
          r.device_flag = u64Num(v, 0);
          return true;
        case 0x0304:
          r.device_level = byte(v);
          return true;
        case 0x0305:
          r.created_at_ns = ns(v);
          return true;
        case 0x0306:
          r.updated_at_ns = ns(v);
          return true;
      }
      return false;
    }
    case 0x0401:
    case 0x0701:
    case 0x0801: {
      const m = d as RawMember;
      switch (col - (table & 0xff00)) {
        case 1:
          m.uid = str(v);
          return true;
        case 2:
          m.created_at_ns = ns(v);
          return true;
        case 3:
          m.updated_at_ns = ns(v);
          return true;
      }
      return false;
    }
    case 0x0601: {
      const c = d as RawChannelInfo;
      switch (col) {
        case 0x0602:
          c.channel_id = str(v);
          return true;
        case 0x0603:
          c.channel_type = byte(v);
          return true;
        case 0x0604:
          c.ban = bool(v);
          return true;
        case 0x0605:
          c.large = bool(v);
          return true;
        case 0x0606:
          c.disband = bool(v);
          return true;
        case 0x0607:
          c.subscriber_count = u32(v, 0);
          return true;
        case 0x0608:
          c.allowlist_count = u32(v, 0);
          return true;
        case 0x0609:
          c.denylist_count = u32(v, 0);
          return true;
        case 0x060a:
          c.created_at_ns = ns(v);
          return true;
        case 0x060b:
          c.updated_at_ns = ns(v);
          return true;
        case 0x060c:
          c.send_ban = bool(v);
          return true;
        case 0x060d:
          c.allow_stranger = bool(v);
          return true;
      }
      return false;
    }
    case 0x0901: {
      const c = d as RawConversation;
      switch (col) {
        case 0x0901:
          c.uid = str(v);
          return true;
        case 0x0902:
          c.channel_id = str(v);
          return true;
        case 0x0903:
          c.channel_type = byte(v);
          return true;
        case 0x0904:
          c.type = byte(v);
          return true;
        case 0x0905:
          c.unread_count = u32(v, 0);
          return true;
        case 0x0906:
          c.readed_to_msg_seq = u64Num(v, 0);
          return true;
        case 0x0907:
          c.created_at_ns = ns(v);
          return true;
        case 0x0908:
          c.updated_at_ns = ns(v);
          return true;
        case 0x0909:
          c.deleted_at_msg_seq = u64Num(v, 0);
          return true;
      }
      return false;
    }
    case 0x0b01: {
      const c = d as ClusterConfigRow;
      switch (col) {
        case 0x0b01:
          c.channel_id = str(v);
          return true;
        case 0x0b02:
          c.channel_type = byte(v);
          return true;
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

export function flush(row: Row, sink: ShardSink): void {
  const d = row.data;
  switch (row.table) {
    case 0x0101:
      sink.message(d as RawMessage);
      break;
    case 0x0201:
      sink.user(d as RawUser);
      break;
    case 0x0301:
      sink.device(d as RawDevice);
      break;
    case 0x0401:
    case 0x0701:
    case 0x0801:
      sink.member(d as RawMember);
      break;
    case 0x0601:
      sink.channelInfo(d as RawChannelInfo);
      break;
    case 0x0901:
      sink.conversation(d as RawConversation);
      break;
    case 0x0b01: {
      const c = d as ClusterConfigRow;
      sink.clusterConfig(c.ch, c.channel_id, c.channel_type);
      break;
    }
    case 0x1001:
      sink.systemUid((d as SystemUidRow).uid as string);
      break;
  }
}
