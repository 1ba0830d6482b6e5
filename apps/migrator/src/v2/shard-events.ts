import { Buffer } from 'node:buffer';
import type { ByteOut } from '../archive/json-bytes.ts';
import { messageTailBound, writeMessageTail } from '../archive/record-json.ts';
import type {
  CheckedMessage,
  RawChannelInfo,
  RawConversation,
  RawDevice,
  RawMember,
  RawMessage,
  RawUser,
  ShardSink,
} from './scan-shard.ts';

/**
 * A shard scan recorded as data, so a worker thread can decode a shard while
 * the main thread checks and writes another: every sink call becomes a code
 * followed by its fields in a flat list (cheap to copy between threads, unlike
 * objects), and each message's JSON tail is encoded into a byte buffer that
 * is transferred, not copied. Replaying a batch makes the same calls, in the
 * same order, on the real sink.
 */

/**
 * What replaying drives: a shard sink that also takes message rows whose JSON
 * tail (`writeMessageTail`) a worker has already encoded as UTF-8.
 */
export interface ReplaySink extends ShardSink {
  loadingTails: boolean;
  encodedMessage(m: CheckedMessage, tail: Uint8Array): void;
}

/** One slice of a recorded scan. */
export interface EventBatch {
  events: unknown[];
  /** Encoded message tails; `events` hold their offsets. */
  bytes: Uint8Array;
}

const MESSAGE = 1;
const TAIL = 2;
const END_TAILS = 3;
const USER = 4;
const DEVICE = 5;
const CHANNEL_INFO = 6;
const MEMBER = 7;
const CONVERSATION = 8;
const SYSTEM_UID = 9;
const CLUSTER_CONFIG = 10;
const ARCHIVED = 11;
const PROBLEM = 12;

/** Events per batch and bytes of message tails per batch (one batch is in flight per post). */
const MAX_EVENTS = 1 << 15;
export const TAIL_BUFFER_BYTES = 1 << 20;

/** The worker-side sink: records calls and hands full batches to `post`. */
export class EventRecorder implements ShardSink, ByteOut {
  private events: unknown[] = [];
  /** Message tails of the batch being recorded (`ByteOut`). */
  buf: Buffer;
  used = 0;
  private loadingTails = true;

  /** `spare`: a buffer of `TAIL_BUFFER_BYTES` the replaying side has handed back, if any. */
  constructor(
    private readonly post: (batch: EventBatch, transfer: ArrayBuffer[]) => void,
    private readonly maxEvents = MAX_EVENTS,
    private readonly spare: () => ArrayBuffer | undefined = () => undefined,
  ) {
    this.buf = this.freshBytes();
  }

  /** `ByteOut`: a message's room is set aside before its tail is written (its offsets must stay in one buffer). */
  reserve(n: number): void {
    if (n > this.buf.length - this.used) throw new Error(`recorded scan: a message tail outgrew its bound (${n} more bytes)`);
  }

  private freshBytes(): Buffer {
    return Buffer.from(this.spare() ?? new ArrayBuffer(TAIL_BUFFER_BYTES));
  }

  /** The last-seq keys read ahead of the scan are done; later tail calls are the scan's own (ignored, as in-thread). */
  endTails(): void {
    this.loadingTails = false;
    this.events.push(END_TAILS);
  }

  tail(ch: string, lastSeq: number, setTimeNs: string): void {
    if (this.loadingTails) this.events.push(TAIL, ch, lastSeq, setTimeNs);
  }

  message(m: RawMessage): void {
    const need = messageTailBound(m);
    if (need > this.buf.length - this.used) {
      this.flush();
      if (need > this.buf.length) this.buf = Buffer.from(new ArrayBuffer(need));
    }
    const start = this.used;
    writeMessageTail(this, m);
    this.events.push(
      MESSAGE,
      m.ch,
      m.seq,
      m.column_seq,
      m.header,
      m.channel_id,
      m.channel_type,
      m.message_id,
      m.from_uid,
      m.client_msg_no,
      m.stream_no,
      m.setting,
      m.timestamp,
      m.term,
      start,
      this.used,
    );
    this.full();
  }

  user(u: RawUser): void {
    this.events.push(USER, u.uid, u.plugin_no, u.created_at_ns, u.updated_at_ns);
    this.full();
  }

  device(d: RawDevice): void {
    this.events.push(DEVICE, d.v2_device_id, d.uid, d.token, d.device_flag, d.device_level, d.created_at_ns, d.updated_at_ns);
    this.full();
  }

  channelInfo(c: RawChannelInfo): void {
    this.events.push(
      CHANNEL_INFO,
      c.ch,
      c.channel_id,
      c.channel_type,
      c.ban,
      c.large,
      c.disband,
      c.send_ban,
      c.allow_stranger,
      c.subscriber_count,
      c.allowlist_count,
      c.denylist_count,
      c.created_at_ns,
      c.updated_at_ns,
    );
    this.full();
  }

  member(m: RawMember): void {
    this.events.push(MEMBER, m.list, m.ch, m.uid, m.created_at_ns, m.updated_at_ns);
    this.full();
  }

  conversation(c: RawConversation): void {
    this.events.push(
      CONVERSATION,
      c.v2_id,
      c.uid,
      c.type,
      c.channel_id,
      c.channel_type,
      c.unread_count,
      c.readed_to_msg_seq,
      c.deleted_at_msg_seq,
      c.created_at_ns,
      c.updated_at_ns,
    );
    this.full();
  }

  systemUid(uid: string): void {
    this.events.push(SYSTEM_UID, uid);
    this.full();
  }

  clusterConfig(ch: string, channelId: string, channelType: number): void {
    this.events.push(CLUSTER_CONFIG, ch, channelId, channelType);
    this.full();
  }

  // keys and values are views the reader reuses: they are copied
  archived(kind: string, key: Uint8Array, value: Uint8Array): void {
    this.events.push(ARCHIVED, kind, key.slice(), value.slice());
    this.full();
  }

  problem(kind: string, key: Uint8Array, detail: string): void {
    this.events.push(PROBLEM, kind, key.slice(), detail);
    this.full();
  }

  /** Posts what is recorded (also when empty: a batch marks progress). */
  flush(): void {
    const batch: EventBatch = { events: this.events, bytes: this.buf.subarray(0, this.used) };
    this.post(batch, [this.buf.buffer as ArrayBuffer]);
    this.events = [];
    this.buf = this.freshBytes();
    this.used = 0;
  }

  private full(): void {
    if (this.events.length >= this.maxEvents) this.flush();
  }
}

/** Makes the recorded calls of `batch` on `sink`; `endTails` clears `sink.loadingTails`. */
export function replay(batch: EventBatch, sink: ReplaySink): void {
  const e = batch.events;
  let i = 0;
  while (i < e.length) {
    switch (e[i]) {
      case MESSAGE: {
        const m: CheckedMessage = {
          ch: e[i + 1] as string,
          seq: e[i + 2] as number,
          column_seq: e[i + 3] as number,
          header: e[i + 4] as number,
          channel_id: e[i + 5] as string,
          channel_type: e[i + 6] as number,
          message_id: e[i + 7] as string,
          from_uid: e[i + 8] as string,
          client_msg_no: e[i + 9] as string,
          stream_no: e[i + 10] as string,
          setting: e[i + 11] as number,
          timestamp: e[i + 12] as number,
          term: e[i + 13] as string,
        };
        sink.encodedMessage(m, batch.bytes.subarray(e[i + 14] as number, e[i + 15] as number));
        i += 16;
        break;
      }
      case TAIL:
        sink.tail(e[i + 1] as string, e[i + 2] as number, e[i + 3] as string);
        i += 4;
        break;
      case END_TAILS:
        sink.loadingTails = false;
        i += 1;
        break;
      case USER:
        sink.user({
          uid: e[i + 1] as string,
          plugin_no: e[i + 2] as string,
          created_at_ns: e[i + 3] as string,
          updated_at_ns: e[i + 4] as string,
        });
        i += 5;
        break;
      case DEVICE:
        sink.device({
          v2_device_id: e[i + 1] as string,
          uid: e[i + 2] as string,
          token: e[i + 3] as string,
          device_flag: e[i + 4] as number,
          device_level: e[i + 5] as number,
          created_at_ns: e[i + 6] as string,
          updated_at_ns: e[i + 7] as string,
        });
        i += 8;
        break;
      case CHANNEL_INFO:
        sink.channelInfo({
          ch: e[i + 1] as string,
          channel_id: e[i + 2] as string,
          channel_type: e[i + 3] as number,
          ban: e[i + 4] as boolean,
          large: e[i + 5] as boolean,
          disband: e[i + 6] as boolean,
          send_ban: e[i + 7] as boolean,
          allow_stranger: e[i + 8] as boolean,
          subscriber_count: e[i + 9] as number,
          allowlist_count: e[i + 10] as number,
          denylist_count: e[i + 11] as number,
          created_at_ns: e[i + 12] as string,
          updated_at_ns: e[i + 13] as string,
        });
        i += 14;
        break;
      case MEMBER:
        sink.member({
          list: e[i + 1] as RawMember['list'],
          ch: e[i + 2] as string,
          uid: e[i + 3] as string,
          created_at_ns: e[i + 4] as string,
          updated_at_ns: e[i + 5] as string,
        });
        i += 6;
        break;
      case CONVERSATION:
        sink.conversation({
          v2_id: e[i + 1] as string,
          uid: e[i + 2] as string,
          type: e[i + 3] as number,
          channel_id: e[i + 4] as string,
          channel_type: e[i + 5] as number,
          unread_count: e[i + 6] as number,
          readed_to_msg_seq: e[i + 7] as number,
          deleted_at_msg_seq: e[i + 8] as number,
          created_at_ns: e[i + 9] as string,
          updated_at_ns: e[i + 10] as string,
        });
        i += 11;
        break;
      case SYSTEM_UID:
        sink.systemUid(e[i + 1] as string);
        i += 2;
        break;
      case CLUSTER_CONFIG:
        sink.clusterConfig(e[i + 1] as string, e[i + 2] as string, e[i + 3] as number);
        i += 4;
        break;
      case ARCHIVED:
        sink.archived(e[i + 1] as string, e[i + 2] as Uint8Array, e[i + 3] as Uint8Array);
        i += 4;
        break;
      case PROBLEM:
        sink.problem(e[i + 1] as string, e[i + 2] as Uint8Array, e[i + 3] as string);
        i += 4;
        break;
      default:
        throw new Error(`recorded scan: unknown event ${String(e[i])} at ${i}`);
    }
  }
}
