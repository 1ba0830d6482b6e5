/**
 * Packet objects for WKProto. Representation rules (exact, never lossy):
 * - every 64-bit wire field (message_id, message_seq, timestamps in ms,
 *   time_diff, node_id, stream_id) is a `bigint`; message_seq is a `bigint` at
 *   every version so callers have one type (u32 at V ≤ 5, u64 at V 6);
 * - every field of 32 bits or fewer is a `number`;
 * - strings are JS strings (UTF-8 on the wire);
 * - `payload`/`data` are byte views. A decoded view may alias the chunk given
 *   to the decoder (no copy); the decoder never writes into memory it returned.
 * Fields marked "filled on decode" are optional when encoding and always set
 * by the decoder ('' / 0 / 0n when absent at that version or setting).
 */
import type { PacketType } from './constants.ts';

/** Fixed-header flags (absent = false). Ignored for CONNACK, PING and PONG. */
export interface FrameFlags {
  noPersist?: boolean;
  redDot?: boolean;
  syncOnce?: boolean;
  dup?: boolean;
}

/** C→S login; layout identical at every version. */
export interface ConnectPacket extends FrameFlags {
  type: typeof PacketType.CONNECT;
  version: number;
  deviceFlag: number;
  deviceId: string;
  uid: string;
  token: string;
  /** Client clock, ms since the epoch. */
  clientTimestamp: bigint;
  /** Base64 X25519 public key, '' when the client wants no encryption. */
  clientKey: string;
}

/** S→C login answer. `serverVersion` present ⇔ the HasServerVersion flag is set. */
export interface ConnackPacket {
  type: typeof PacketType.CONNACK;
  serverVersion?: number;
  /** server_ms − client_timestamp, in ms. */
  timeDiff: bigint;
  reasonCode: number;
  serverKey: string;
  salt: string;
  /** Written and read at V ≥ 4 only (filled on decode, 0n when absent). */
  nodeId?: bigint;
}

/** C→S message. */
export interface SendPacket extends FrameFlags {
  type: typeof PacketType.SEND;
  setting: number;
  clientSeq: number;
  clientMsgNo: string;
  /** Only on the wire at 2 ≤ V ≤ 4 with Setting.STREAM (filled on decode). */
  streamNo?: string;
  channelId: string;
  channelType: number;
  /** Seconds; on the wire at V ≥ 3 (filled on decode). */
  expire?: number;
  msgKey: string;
  /** On the wire iff Setting.TOPIC (filled on decode). */
  topic?: string;
  payload: Uint8Array;
}

/** S→C answer to one SEND. */
export interface SendackPacket extends FrameFlags {
  type: typeof PacketType.SENDACK;
  messageId: bigint;
  clientSeq: number;
  messageSeq: bigint;
  reasonCode: number;
  /** Trailer, appended only when non-empty (filled on decode). */
  clientMsgNo?: string;
}

/** S→C delivered message. */
export interface RecvPacket extends FrameFlags {
  type: typeof PacketType.RECV;
  setting: number;
  msgKey: string;
  fromUid: string;
  channelId: string;
  channelType: number;
  /** Seconds; on the wire at V ≥ 3 (filled on decode). */
  expire?: number;
  clientMsgNo: string;
  /** The three stream fields are on the wire at 2 ≤ V ≤ 4 with Setting.STREAM (filled on decode). */
  streamFlag?: number;
  streamNo?: string;
  streamId?: bigint;
  messageId: bigint;
  messageSeq: bigint;
  /** Server clock, seconds since the epoch (i32). */
  timestamp: number;
  /** On the wire iff Setting.TOPIC (filled on decode). */
  topic?: string;
  payload: Uint8Array;
}

/** C→S delivery acknowledgement. */
export interface RecvackPacket extends FrameFlags {
  type: typeof PacketType.RECVACK;
  messageId: bigint;
  messageSeq: bigint;
}

/** C→S heartbeat (one byte on the wire). */
export interface PingPacket {
  type: typeof PacketType.PING;
}

/** S→C heartbeat answer (one byte on the wire). */
export interface PongPacket {
  type: typeof PacketType.PONG;
}

/** Session end notice (S→C kick). */
export interface DisconnectPacket extends FrameFlags {
  type: typeof PacketType.DISCONNECT;
  reasonCode: number;
  reason: string;
}

/** C→S channel subscription (rejected by v3 servers). */
export interface SubPacket extends FrameFlags {
  type: typeof PacketType.SUB;
  setting: number;
  subNo: string;
  channelId: string;
  channelType: number;
  /** 0 subscribe, 1 unsubscribe. */
  action: number;
  param: string;
}

/** S→C subscription answer (never sent by v3 servers). */
export interface SubackPacket extends FrameFlags {
  type: typeof PacketType.SUBACK;
  subNo: string;
  channelId: string;
  channelType: number;
  action: number;
  reasonCode: number;
}

/** Generic event, both directions. */
export interface EventPacket extends FrameFlags {
  type: typeof PacketType.EVENT;
  id: string;
  /** The event's `type` string (renamed: `type` is the packet discriminator). */
  eventType: string;
  /** ms since the epoch. */
  timestamp: bigint;
  data: Uint8Array;
}

/** Any WKProto packet, discriminated by `type`. */
export type WkPacket =
  | ConnectPacket
  | ConnackPacket
  | SendPacket
  | SendackPacket
  | RecvPacket
  | RecvackPacket
  | PingPacket
  | PongPacket
  | DisconnectPacket
  | SubPacket
  | SubackPacket
  | EventPacket;
