import { ChannelType, personPeer } from '@parley/shared';

/**
 * A committed (or transient) message on its way to online sessions. One
 * object is shared by every recipient; protocol adapters memoize their
 * encodings on it so a group message is serialized once per distinct view.
 */
export class Delivery {
  /** Encodings keyed by adapter-specific view keys. */
  readonly encoded = new Map<string, unknown>();
  private idText: string | undefined;

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

  get messageIdText(): string {
    this.idText ??= this.messageId.toString();
    return this.idText;
  }

  /** The channel id as `uid` sees it: the peer for person channels. */
  channelIdFor(uid: string): string {
    if (this.channelType !== ChannelType.Person) return this.channelId;
    const peer = personPeer(uid, this.channelId);
    return peer === this.channelId ? this.fromUid : peer;
  }

  /** The red dot as `uid` sees it: never for the sender's own devices. */
  redDotFor(uid: string): boolean {
    return this.redDot && uid !== this.fromUid;
  }
}
