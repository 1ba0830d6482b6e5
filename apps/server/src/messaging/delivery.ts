import { ChannelType, personPeer } from '@parley/shared';

/**
 * A committed (or transient) message on its way to online sessions. One
 * object is shared by every recipient; protocol adapters memoize their
 * encodings on it so a group message is serialized once per distinct view.
 */
export class Delivery {
  private memo: Map<string, unknown> | undefined;
  private idText: string | undefined;
  /** The id's two 32-bit halves as unsigned numbers (see `idEqualsInt64BE`); -2 until split, -1 when it is not a positive int64. */
  private idHigh = -2;
  private idLow = 0;
  /**
   * The payload as a JSON-RPC `recv` carries it, when the entry point already
   * had it (a JSON-RPC send of a JSON object); else set by the first JSON-RPC
   * recipient.
   */
  payloadJson: string | undefined;
  /**
   * JSON-RPC `recv` frames (WebSocket-framed bytes), memoized per view: slot 0 without the red dot,
   * slot 1 with it, each for the channel id in `jsonrpcView*` (the same for
   * every member of a group; the peer's or the sender's view of a person
   * channel). A view that does not match its slot is encoded again.
   */
  jsonrpcView0: string | undefined;
  jsonrpcFrame0: Buffer | undefined;
  jsonrpcView1: string | undefined;
  jsonrpcFrame1: Buffer | undefined;
  /** The message id as a JSON-RPC session compares a compact recvack with it (gateway/ws-recvack.ts `ackIdKey`). */
  jsonrpcAckKey: Int32Array | undefined;
  /**
   * The first WKProto RECV template built for this delivery (not a resend),
   * with the view it was built for: protocol version, red dot and the
   * recipient's channel id. Every session with that view reuses it without a
   * look-up key; other views are memoized in `encoded`.
   */
  wkprotoTemplate: unknown = undefined;
  wkprotoVersion = 0;
  wkprotoRedDot = false;
  wkprotoChannelId: string | undefined = undefined;
  /**
   * When the fan-out now under way began, unix ms (set by `Fanout` before
   * its loop; 0 until then): sessions date the RECV's ack deadline from it
   * instead of reading the clock once per recipient.
   */
  fanoutAt = 0;
  /**
   * Person channels: the two participants in canonical order, when the send
   * path has them at hand (else derived from `channelId`).
   */
  participants: readonly [string, string] | undefined;

  constructor(
    readonly messageId: bigint,
    readonly messageSeq: number,
    readonly clientMsgNo: string,
    readonly fromUid: string,
    /** Canonical source channel id (person `a@b`, no command suffix). */
    readonly channelId: string,
    readonly channelType: number,
    /** Server time, unix seconds. */
    readonly timestamp: number,
    readonly payload: Uint8Array,
    readonly setting: number,
    readonly topic: string,
    readonly expire: number,
    readonly redDot: boolean,
    readonly syncOnce: boolean,
    readonly noPersist: boolean,
  ) {}

  /** Encodings keyed by adapter-specific view keys (created on first use). */
  get encoded(): Map<string, unknown> {
    this.memo ??= new Map();
    return this.memo;
  }

  get messageIdText(): string {
    this.idText ??= this.messageId.toString();
    return this.idText;
  }

  /**
   * Whether the 8 bytes at `buf[at]` (a big-endian int64, as WKProto carries
   * ids) are this message's id: exactly `messageId === BigInt.asIntN(64, read)`
   * for a positive id, without a BigInt per comparison.
   */
  idEqualsInt64BE(buf: Uint8Array, at: number): boolean {
    if (this.idHigh === -2) this.splitId();
    const high = ((buf[at]! << 24) | (buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!) >>> 0;
    const low = ((buf[at + 4]! << 24) | (buf[at + 5]! << 16) | (buf[at + 6]! << 8) | buf[at + 7]!) >>> 0;
    return high === this.idHigh && low === this.idLow;
  }

  private splitId(): void {
    const id = this.messageId;
    if (id <= 0n || id > 0x7fff_ffff_ffff_ffffn) {
      this.idHigh = -1;
      return;
    }
    this.idHigh = Number(id >> 32n);
    this.idLow = Number(id & 0xffff_ffffn);
  }

  /** The channel id as `uid` sees it: the peer for person channels. */
  channelIdFor(uid: string): string {
    if (this.channelType !== ChannelType.Person) return this.channelId;
    const pair = this.participants;
    if (pair) return uid === pair[0] ? pair[1] : uid === pair[1] ? pair[0] : this.fromUid;
    const peer = personPeer(uid, this.channelId);
    return peer === this.channelId ? this.fromUid : peer;
  }

  /** The red dot as `uid` sees it: never for the sender's own devices. */
  redDotFor(uid: string): boolean {
    return this.redDot && uid !== this.fromUid;
  }
}
