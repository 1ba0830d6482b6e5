import {
  checkRecvackBody,
  encodePacket,
  encodeSendack,
  negotiateVersion,
  PacketType,
  recvackMessageIdText,
  recvTemplate,
  serverKeyExchange,
  Setting,
  WkprotoCryptoError,
  WkprotoDecoder,
  type ConnectPacket,
  type RecvPacket,
  type RecvTemplate,
  type SendPacket,
  type WkPacket,
  type WkSessionCrypto,
} from '@parley/protocol/wkproto';
import { ReasonCode } from '@parley/shared';
import type { Logger } from 'pino';
import { KICK_GRACE_MS, type AuthResult } from '../identity/token.service.ts';
import type { Delivery } from '../messaging/delivery.ts';
import type { SessionHandle } from '../messaging/presence.ts';
import { refusalReason, SessionErrorClass } from './metrics.ts';
import { startSend, type GatewayServices } from './services.ts';
import { MAX_CONNECT_BYTES, SessionBase } from './session-base.ts';

/** Where a WKProto session writes: a TCP socket or a WebSocket (one packet per message). */
export interface PacketSink {
  send(packet: Uint8Array): void;
  close(reason: string): void;
}

/** What a SENDACK reports. */
interface AckOutcome {
  reason: number;
  messageId: bigint;
  messageSeq: number;
}

/**
 * A SEND awaiting its SENDACK: what the SENDACK echoes, and `outcome` once the
 * send is settled. Not the decoded packet: its payload is a view of the read,
 * which a later read overwrites.
 */
interface AckSlot {
  clientSeq: number;
  clientMsgNo: string;
  outcome: AckOutcome | undefined;
}

/** A CONNECT answered this long after it was read is logged, ms (clients give up after a few seconds). */
const SLOW_CONNECT_MS = 1000;

/** Protocol version used for packets written before CONNECT is decoded. */
const PRE_CONNECT_VERSION = 5;

/**
 * One binary WKProto session (TCP or WebSocket). CONNECT must come first and
 * alone; it authenticates, negotiates the protocol version and the payload
 * keys (X25519 → AES-128-CBC). SENDs are decrypted and checked against their
 * msg_key; SENDACKs go out in SEND order; every RECV is encrypted and signed
 * for this session. Any protocol violation closes the session.
 */
export class WkprotoSession extends SessionBase implements SessionHandle {
  readonly protocol = 'wkproto' as const;
  private version = PRE_CONNECT_VERSION;
  private crypto: WkSessionCrypto | undefined;
  private readonly decoder: WkprotoDecoder;
  /** SENDs whose SENDACK is not written yet, in SEND order. */
  private readonly acks: AckSlot[] = [];
  private readonly onPacketBound = (p: WkPacket) => this.onPacket(p);
  /** Bytes received before CONNECT completed; bounded by MAX_CONNECT_BYTES. */
  private preConnectBytes = 0;
  /** While CONNECT is being answered: what it waits for, and since when (unix ms), for the log of a connection lost meanwhile. */
  private connectStage = '';
  private connectAt = 0;

  constructor(
    private readonly sink: PacketSink,
    private readonly services: GatewayServices,
    private readonly log: Logger,
    private readonly maxPacketBytes: number,
  ) {
    super(services.ackPolicy);
    // Until CONNECT completes only a CONNECT-sized packet is accepted, so a half-sent
    // packet declaring 1 MiB cannot make the decoder allocate its body.
    this.decoder = new WkprotoDecoder({ version: PRE_CONNECT_VERSION, maxRemainingLength: Math.min(maxPacketBytes, MAX_CONNECT_BYTES) });
  }

  /**
   * Feeds bytes as they arrive (`length` bytes of `chunk` from `start` on);
   * packets may span chunks and chunks may hold many packets. Nothing is kept
   * of `chunk` past the call, so it may be a read buffer that the next read
   * overwrites.
   */
  onData(chunk: Uint8Array, length = chunk.length, start = 0): void {
    this.inbound = (this.inbound + 1) | 0;
    if (this.state === 'closed') return;
    if (!this.authenticated) {
      this.preConnectBytes += length;
      if (this.preConnectBytes > MAX_CONNECT_BYTES) {
        this.closeWith('too many bytes before CONNECT completed', ['connect_too_large', SessionErrorClass.protocol]);
        return;
      }
    }
    try {
      this.decoder.push(chunk, this.onPacketBound, length, start);
    } catch (err) {
      this.log.debug({ err: (err as Error).message, session: this.id }, 'wkproto decode failed');
      this.closeWith('protocol error', ['decode_error', SessionErrorClass.protocol]);
    }
  }

  onClose(): void {
    if (this.state === 'authenticating' || (this.state === 'awaiting-connect' && this.preConnectBytes > 0))
      this.logUnanswered('closed by the client');
    if (this.state === 'open') this.services.presence.remove(this);
    this.state = 'closed';
    this.forgetAcks();
  }

  expire(reason: 'auth timeout' | 'idle timeout'): void {
    if (!this.authenticated) this.logUnanswered(reason);
    this.closeWith(reason);
  }

  /**
   * Logs a connection that ends before its CONNECT was answered (rare: a
   * client that gave up, a half-sent CONNECT): whether the CONNECT had
   * arrived, how many bytes had, and what its answer was waiting for.
   */
  private logUnanswered(how: string): void {
    const now = Date.now();
    this.log.info(
      {
        session: this.id,
        state: this.state,
        bytes: this.preConnectBytes,
        decoderHolds: this.decoder.bufferedBytes,
        ageMs: now - this.openedAt,
        ...(this.state === 'authenticating' ? { stage: this.connectStage, connectWaitMs: now - this.connectAt } : {}),
      },
      `connection ${how} before its CONNECT was answered`,
    );
  }

  deliver(d: Delivery): void {
    if (this.state !== 'open' || !this.crypto || !this.awaitAck(d)) return;
    this.writeRecv(d, false);
  }

  protected resend(d: Delivery): void {
    if (this.state === 'open') this.writeRecv(d, true);
  }

  protected closeUnacked(reason: string): void {
    this.closeWith(reason, ['recv_unacked', SessionErrorClass.backpressure]);
  }

  /**
   * Encrypts, signs and writes one RECV for this session (`dup` on a resend).
   * The frame around the payload is built once per message and view (protocol
   * version, recipient channel id, flags) and memoized on the delivery; each
   * session copies it and writes in only its own ciphertext and msg_key.
   */
  private writeRecv(d: Delivery, dup: boolean): void {
    if (!this.crypto) return;
    const channelId = d.channelIdFor(this.uid);
    const redDot = d.redDotFor(this.uid);
    // The delivery's first view needs no key (a 1:1 message has one recipient session, a group's share one view).
    const first = !dup && d.wkprotoChannelId === channelId && d.wkprotoVersion === this.version && d.wkprotoRedDot === redDot;
    const key = first ? '' : `wk:${this.version}:${dup ? 1 : 0}${redDot ? 1 : 0}:${channelId}`;
    try {
      let template = first ? (d.wkprotoTemplate as RecvTemplate) : (d.encoded.get(key) as RecvTemplate | undefined);
      if (template === undefined) {
        const recv: RecvPacket = {
          type: PacketType.RECV,
          dup,
          redDot,
          syncOnce: d.syncOnce,
          noPersist: d.noPersist,
          setting: d.setting & ~Setting.NO_ENCRYPT,
          msgKey: '',
          fromUid: d.fromUid,
          channelId,
          channelType: d.channelType,
          expire: d.expire,
          clientMsgNo: d.clientMsgNo,
          messageId: d.messageId,
          messageSeq: BigInt(d.messageSeq),
          timestamp: d.timestamp,
          topic: d.topic,
          payload: d.payload,
        };
        template = recvTemplate(recv, d.payload.length, this.version);
        if (!dup && d.wkprotoChannelId === undefined) {
          d.wkprotoTemplate = template;
          d.wkprotoVersion = this.version;
          d.wkprotoRedDot = redDot;
          d.wkprotoChannelId = channelId;
        } else {
          d.encoded.set(key, template);
        }
      }
      this.sink.send(this.crypto.sealRecvFrame(template, d.payload));
    } catch (err) {
      this.log.warn({ err: (err as Error).message, session: this.id }, 'recv not encodable for this session');
      this.acked(d.messageIdText);
    }
  }

  kick(reasonCode: number, reason: string): void {
    if (this.state === 'closed') return;
    this.sink.send(encodePacket({ type: PacketType.DISCONNECT, reasonCode, reason }, this.version));
    const timer = setTimeout(() => this.closeWith(reason), KICK_GRACE_MS);
    timer.unref();
  }

  /** Tells the client the server is going away; the gateway closes the socket once in-flight sends are answered. */
  goAway(reasonCode: number, reason: string): void {
    if (this.state === 'open') this.sink.send(encodePacket({ type: PacketType.DISCONNECT, reasonCode, reason }, this.version));
  }

  private onPacket(p: WkPacket): void {
    switch (this.state) {
      case 'closed':
        return;
      case 'awaiting-connect':
        if (p.type !== PacketType.CONNECT)
          return this.closeWith('CONNECT must be the first packet', ['connect_required', SessionErrorClass.protocol]);
        this.state = 'authenticating';
        this.connectAt = Date.now();
        this.connect(p).catch((err: unknown) => {
          this.log.error({ err, session: this.id }, 'wkproto connect failed');
          this.closeWith('internal error', ['internal_error', SessionErrorClass.internal]);
        });
        return;
      case 'authenticating':
        return this.closeWith('packet before CONNACK', ['packet_before_connack', SessionErrorClass.protocol]);
    }
    // An open session's RECVACKs never come here: the decoder hands them to `onRecvack` undecoded.
    switch (p.type) {
      case PacketType.SEND:
        return this.send(p);
      case PacketType.PING:
        this.sink.send(encodePacket({ type: PacketType.PONG }, this.version));
        return;
      default:
        this.closeWith(`packet type ${p.type} is not accepted`, ['unsupported_packet', SessionErrorClass.protocol]);
    }
  }

  /**
   * A RECVACK of an open session, read in place (same outcome as the decoded
   * packet: a non-positive id is ignored, a truncated body fails the decoder).
   */
  private onRecvack(buf: Buffer, start: number, end: number): void {
    if (this.state !== 'open') return;
    checkRecvackBody(start, end, this.version);
    // Nearly every ack names the oldest RECV awaiting one: its id is compared where it lies.
    const oldest = this.oldestPending();
    if (oldest !== undefined && oldest.idEqualsInt64BE(buf, start)) {
      this.ackedOldest();
      return;
    }
    const id = recvackMessageIdText(buf, start, end, this.version);
    if (id !== '0' && id.charCodeAt(0) !== 0x2d) this.acked(id);
  }

  private async connect(p: ConnectPacket): Promise<void> {
    const version = negotiateVersion(p.version);
    // The session's version applies from a successful CONNECT on; a refusal is
    // written before that, at V=5 for every client (so it carries node_id).
    const connack = (reasonCode: number, encodeVersion: number, serverKey = '', salt = '') =>
      encodePacket(
        {
          type: PacketType.CONNACK,
          serverVersion: p.version > 3 ? version : undefined,
          timeDiff: BigInt(Date.now()) - p.clientTimestamp,
          reasonCode,
          serverKey,
          salt,
          nodeId: BigInt(this.services.nodeId),
        },
        encodeVersion,
      );
    const refuse = (reasonCode: number) => {
      if (reasonCode === ReasonCode.AuthFail) this.services.metrics.authFailures++;
      this.log.info({ uid: p.uid, deviceFlag: p.deviceFlag, reasonCode, session: this.id }, 'connect refused');
      this.sink.send(connack(reasonCode, PRE_CONNECT_VERSION));
      this.closeWith('connect refused', [refusalReason(reasonCode), SessionErrorClass.auth]);
    };

    this.connectStage = 'token lookup';
    const auth: AuthResult =
      p.uid === ''
        ? { reason: ReasonCode.AuthFail, deviceLevel: 0 }
        : await this.services.tokens.authenticate(p.uid, p.deviceFlag, p.token);
    if (this.state !== 'authenticating') return;
    if (auth.reason !== ReasonCode.Success) return refuse(auth.reason);
    // The ban came with the credentials; only a device with no record needs a look-up of its own.
    this.connectStage = 'ban lookup';
    if (auth.banned ?? (await this.services.isUserBanned(p.uid))) return refuse(ReasonCode.Ban);
    if (this.state !== 'authenticating') return;
    if (p.clientKey === '') return refuse(ReasonCode.ClientKeyIsEmpty);
    let exchange: ReturnType<typeof serverKeyExchange>;
    try {
      exchange = serverKeyExchange(p.clientKey);
    } catch (err) {
      if (err instanceof WkprotoCryptoError) return refuse(ReasonCode.AuthFail);
      throw err;
    }

    this.uid = p.uid;
    this.deviceFlag = p.deviceFlag;
    this.deviceId = p.deviceId;
    this.deviceLevel = auth.deviceLevel;
    this.crypto = exchange.session;
    this.version = version;
    this.decoder.version = version;
    this.decoder.maxRemainingLength = this.maxPacketBytes;
    // From here on (state 'open') RECVACKs are read in place, one per delivered message.
    this.decoder.onRecvackBody = (buf, start, end) => this.onRecvack(buf, start, end);
    for (const old of this.services.presence.conflicting(this.uid, this.deviceFlag, this.deviceId, this.deviceLevel)) {
      old.kick(ReasonCode.ConnectKick, 'login in other device');
    }
    this.state = 'open';
    this.markAuthenticated();
    this.services.presence.add(this);
    const waitedMs = Date.now() - this.connectAt;
    if (waitedMs > SLOW_CONNECT_MS) this.log.warn({ session: this.id, uid: this.uid, waitedMs }, 'CONNECT answered late');
    this.sink.send(connack(ReasonCode.Success, version, exchange.serverKey, exchange.salt));
  }

  private send(p: SendPacket): void {
    const slot: AckSlot = { clientSeq: p.clientSeq, clientMsgNo: p.clientMsgNo, outcome: undefined };
    this.acks.push(slot);
    let payload: Uint8Array;
    try {
      // A buffer of its own (the packet's payload is a view of the read).
      payload = this.crypto!.openSend(p);
    } catch (err) {
      if (!(err instanceof WkprotoCryptoError)) throw err;
      const reason = err.code === 'MSG_KEY_MISMATCH' ? ReasonCode.MsgKeyError : ReasonCode.PayloadDecodeError;
      this.settleAck(slot, { reason, messageId: 0n, messageSeq: 0 });
      return;
    }
    startSend(
      this.services.send,
      {
        fromUid: this.uid,
        deviceId: this.deviceId,
        channelId: p.channelId,
        channelType: p.channelType,
        payload,
        clientMsgNo: p.clientMsgNo,
        setting: p.setting & ~Setting.NO_ENCRYPT,
        topic: p.topic ?? '',
        expire: p.expire ?? 0,
        redDot: p.redDot === true,
        syncOnce: p.syncOnce === true,
        noPersist: p.noPersist === true,
        session: this,
      },
      this.log,
      this.id,
      (o) => this.settleAck(slot, o),
    );
  }

  /**
   * Records a SEND's outcome and writes every SENDACK now due: SENDACKs leave
   * in SEND order, so one waits until the SENDs before it are settled too.
   */
  private settleAck(slot: AckSlot, outcome: AckOutcome): void {
    slot.outcome = outcome;
    const acks = this.acks;
    if (acks[0] !== slot) return;
    let n = 0;
    for (; n < acks.length; n++) {
      const o = acks[n]!.outcome;
      if (o === undefined) break;
      if (this.state !== 'open') continue;
      const a = acks[n]!;
      this.sink.send(encodeSendack(o.messageId, a.clientSeq, BigInt(o.messageSeq), o.reason, a.clientMsgNo, this.version));
    }
    if (n === acks.length) acks.length = 0;
    else acks.splice(0, n);
  }

  close(reason: string): void {
    this.closeWith(reason);
  }

  /** Closes the session; `error` (close reason, class) counts it as a session error for top alerts. */
  private closeWith(reason: string, error?: [string, SessionErrorClass]): void {
    if (this.state === 'closed') return;
    if (error) this.services.metrics.sessionError('wkproto', error[0], error[1]);
    if (this.state === 'open') this.services.presence.remove(this);
    this.state = 'closed';
    this.sink.close(reason);
  }
}
