/**
 * A small WKProto client for tests and the benchmark: CONNECT with the X25519
 * key exchange, encrypted + signed SEND resolved by its SENDACK, verified and
 * decrypted RECV (optionally auto-acknowledged), PING/PONG.
 */
import { Buffer } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { openTransport, withTimeout, type ClientTransport } from './client-transport.ts';
import { negotiateVersion, PacketType, ReasonCode, Setting } from './constants.ts';
import { clientKeyExchange, generateKeyPair, type WkKeyPair, type WkSessionCrypto } from './crypto.ts';
import { decodeBody } from './decode.ts';
import { encodePacket, encodeRecvack } from './encode.ts';
import { recvBatchEnabled, recvBatchGroup, type BatchReceiver, type RecvBatchGroup } from './recv-batch.ts';
import { newRecvView, recvackFrameBytes, scanRecv, writeRecvack } from './recv-view.ts';
import { WkprotoDecoder } from './stream-decoder.ts';
import type { ConnackPacket, DisconnectPacket, RecvPacket, SendackPacket, WkPacket } from './types.ts';

/** Options of {@link WkprotoClient}. */
export interface WkprotoClientOptions {
  /** `tcp://host:port` or `ws://host:port/`. */
  url: string;
  uid: string;
  token: string;
  /** 0 APP, 1 WEB (default), 2 PC. */
  deviceFlag?: number;
  deviceId?: string;
  /** Protocol version sent in CONNECT (default 5, what the JS SDK's source speaks). */
  version?: number;
  /** Send a client_key and encrypt payloads (default true). */
  encrypt?: boolean;
  /**
   * The X25519 key pair whose public half the CONNECT offers (with `encrypt`), made in advance
   * by {@link generateKeyPair} for this connection alone: the session's secret is derived from
   * it, so a pair must never serve two connections. Default: a fresh pair made at connect. The
   * benchmark makes its storm's pairs before the storm, so that the generator's measured CPU is
   * the connects' own work, not key generation the server never sees. A pair that already
   * served a connect (of any client) is refused, as is a pair without `encrypt`.
   */
  keyPair?: WkKeyPair;
  /** Answer every valid RECV with a RECVACK (default true). */
  autoRecvAck?: boolean;
  /** Queue RECVs for {@link WkprotoClient.nextMessage}/{@link WkprotoClient.messages} (default true). */
  bufferMessages?: boolean;
  /** Connect/CONNACK and per-request timeout in ms (default 5000). */
  timeoutMs?: number;
  /**
   * The in-place receive path, for clients that only need each payload (the
   * benchmark's generator). When set, every valid RECV's plaintext payload is
   * passed as `buf[start, end)` (valid during the call only) instead of
   * emitting `recv` and queueing it (so `bufferMessages` does not apply).
   * The checks are the same: the msg_key of every RECV is verified and its
   * payload decrypted (PKCS#7 checked), failures emit `recv-error`. What
   * changes is the cost: a RECV of the common shape is read from the socket's
   * bytes without building strings, BigInts or a packet object, its sign text
   * is written into a reused buffer, the RECVACKs of one socket read go out
   * in one write (still in stream order, before anything the client writes
   * after them), and over TCP every read lands in one read buffer shared by
   * such clients instead of a new buffer and a stream event per read. A RECV of another shape (stream fields, a topic, non-ASCII
   * strings, lenient Base64) takes the reference path, with the same result.
   */
  onPayload?: (buf: Buffer, start: number, end: number) => void;
}

/** Fields of one SEND; `payload` is the plaintext (strings are UTF-8 encoded). */
export interface ClientSendOptions {
  channelId: string;
  channelType: number;
  payload: Uint8Array | string;
  setting?: number;
  clientMsgNo?: string;
  topic?: string;
  expire?: number;
  /** Header flags; RedDot defaults to true like the JS SDK. */
  redDot?: boolean;
  noPersist?: boolean;
  syncOnce?: boolean;
}

/** A verified RECV with its decrypted payload. */
export interface ReceivedMessage {
  packet: RecvPacket;
  payload: Buffer;
}

/** Key pairs given as `keyPair` that a connect has offered already (see {@link WkprotoClientOptions.keyPair}). */
const USED_KEY_PAIRS = new WeakSet<WkKeyPair>();

/** CONNACK with a non-success reason code. */
export class WkprotoConnectError extends Error {
  override readonly name = 'WkprotoConnectError';
  constructor(readonly reasonCode: number) {
    super(`CONNACK reason ${reasonCode}`);
  }
}

/** The empty RECVACK queue. */
const NO_ACKS = Buffer.alloc(0);

function removeItem<T>(list: T[], item: T | undefined): void {
  const i = item === undefined ? -1 : list.indexOf(item);
  if (i >= 0) list.splice(i, 1);
}

interface Pending<T> {
  resolve: (v: T) => void;
  reject: (e: Error) => void;
}

/**
 * Events: `recv` (ReceivedMessage), `recv-error` (Error: msg_key/decrypt
 * failure, the RECV is dropped like the JS SDK does), `disconnect`
 * (DisconnectPacket), `packet` (any other inbound packet), `close` (Error?).
 */
export class WkprotoClient extends EventEmitter {
  /** Version of the session once connected (the CONNACK's, else the negotiated CONNECT version). */
  version: number;
  private transport: ClientTransport | undefined;
  private readonly decoder: WkprotoDecoder;
  private crypto: WkSessionCrypto | undefined;
  private clientSeq = 0;
  private readonly pendingSends = new Map<number, Pending<SendackPacket>>();
  private readonly pendingPings: Pending<void>[] = [];
  private connack: Pending<ConnackPacket> | undefined;
  /** This connection's X25519 keys while its CONNACK is awaited (none with `encrypt: false`). */
  private connectKeys: WkKeyPair | undefined;
  private readonly inbox: ReceivedMessage[] = [];
  private readonly waiters: Pending<ReceivedMessage>[] = [];
  private closedError: Error | undefined;
  /** The RECV being read in place (one object, refilled per RECV). */
  private readonly view = newRecvView();
  /** {@link onPacket} bound once (not a closure per read). */
  private readonly packetHandler = (p: WkPacket): void => this.onPacket(p);
  /** RECVACKs of the current socket read not written yet: `acks[0, ackBytes)`. */
  private acks = NO_ACKS;
  private ackBytes = 0;
  /** The group whose native call opens this client's RECVs (recv-batch.ts), and its slot there. */
  private batchGroup: RecvBatchGroup | undefined;
  private batchSlot = -1;

  constructor(readonly options: WkprotoClientOptions) {
    super();
    if (options.keyPair !== undefined && options.encrypt === false) {
      throw new TypeError('keyPair was given with encrypt: false: an unencrypted session offers no key');
    }
    this.version = negotiateVersion(options.version ?? 5);
    this.decoder = new WkprotoDecoder({ version: this.version });
    if (options.onPayload) this.decoder.onRecvBody = (buf, start, end, flags) => this.onRecvBody(buf, start, end, flags);
  }

  private get timeoutMs(): number {
    return this.options.timeoutMs ?? 5000;
  }

  /** Opens the transport, sends CONNECT and resolves with a success CONNACK (else rejects and closes). */
  async connect(): Promise<ConnackPacket> {
    const o = this.options;
    if (o.keyPair !== undefined) {
      if (USED_KEY_PAIRS.has(o.keyPair)) throw new TypeError('keyPair already served a connect: each connection needs a pair of its own');
      USED_KEY_PAIRS.add(o.keyPair);
    }
    // With onPayload nothing keeps a view of a read: every read may land in one shared buffer.
    const transport = await openTransport(o.url, this.timeoutMs, { reuseReadBuffer: o.onPayload !== undefined });
    this.transport = transport;
    transport.onData((chunk, length, start) => this.onData(chunk, length, start));
    transport.onClose((e) => this.onClosed(e ?? new Error('connection closed')));
    const keys = o.encrypt === false ? undefined : (o.keyPair ?? generateKeyPair());
    this.connectKeys = keys;
    const done = new Promise<ConnackPacket>((resolve, reject) => {
      this.connack = { resolve, reject };
    });
    this.write({
      type: PacketType.CONNECT,
      version: o.version ?? 5,
      deviceFlag: o.deviceFlag ?? 1,
      deviceId: o.deviceId ?? `${randomUUID().replace(/-/g, '')}W`,
      uid: o.uid,
      token: o.token,
      clientTimestamp: BigInt(Date.now()),
      clientKey: keys?.publicKey ?? '',
    });
    // On timeout the error says what the connection got (and the client closes it).
    const ack = await withTimeout(done, this.timeoutMs, () => this.fail(`CONNACK timed out after ${this.timeoutMs} ms`), 'CONNACK');
    if (ack.reasonCode !== ReasonCode.Success) {
      this.close();
      throw new WkprotoConnectError(ack.reasonCode);
    }
    return ack;
  }

  /**
   * A success CONNACK's version and keys apply from the next packet on, so
   * they are taken as the CONNACK is read: the packets behind it in the same
   * read (a RECV, a SENDACK) are decoded at the session's version and
   * decrypted with its keys, not before `connect()` resumes.
   */
  private onConnack(ack: ConnackPacket): void {
    const keys = this.connectKeys;
    this.connectKeys = undefined;
    if (ack.reasonCode === ReasonCode.Success) {
      if (ack.serverVersion !== undefined) this.version = ack.serverVersion;
      this.decoder.version = this.version;
      // A server key that is not a key fails the read: the connection closes and connect() rejects with why.
      if (keys && ack.serverKey) this.crypto = clientKeyExchange(keys.privateKey, ack.serverKey, ack.salt);
      this.joinRecvBatch();
    }
    this.connack?.resolve(ack);
    this.connack = undefined;
  }

  /** Sends one message and resolves with its SENDACK (whatever its reason code). */
  send(m: ClientSendOptions): Promise<SendackPacket> {
    const clientSeq = ++this.clientSeq;
    const payload = typeof m.payload === 'string' ? Buffer.from(m.payload, 'utf8') : m.payload;
    let packet: WkPacket = {
      type: PacketType.SEND,
      redDot: m.redDot ?? true,
      noPersist: m.noPersist ?? false,
      syncOnce: m.syncOnce ?? false,
      setting: m.setting ?? 0,
      clientSeq,
      clientMsgNo: m.clientMsgNo ?? randomUUID().replace(/-/g, ''),
      channelId: m.channelId,
      channelType: m.channelType,
      expire: m.expire ?? 0,
      msgKey: '',
      topic: m.topic ?? '',
      payload,
    };
    const c = this.crypto;
    const frame = c?.sealSendFrame(packet, this.version);
    if (frame === undefined && c) packet = c.sealSend(packet);
    const acked = new Promise<SendackPacket>((resolve, reject) => this.pendingSends.set(clientSeq, { resolve, reject }));
    if (frame !== undefined) this.writeFrame(frame);
    else this.write(packet);
    return acked;
  }

  /** Sends PING and resolves on the matching PONG. */
  ping(): Promise<void> {
    let entry: Pending<void> | undefined;
    const pong = new Promise<void>((resolve, reject) => {
      entry = { resolve, reject };
      this.pendingPings.push(entry);
    });
    this.write({ type: PacketType.PING });
    return withTimeout(pong, this.timeoutMs, () => removeItem(this.pendingPings, entry), 'PONG');
  }

  /** Acknowledges a delivered message (done automatically unless autoRecvAck is false). */
  recvAck(messageId: bigint, messageSeq: bigint): void {
    if (this.closedError || !this.transport) throw this.closedError ?? new Error('not connected');
    this.flushAcks();
    this.put(encodeRecvack(messageId, messageSeq, this.version));
  }

  /** Encodes and writes any packet at the session version. */
  write(packet: WkPacket): void {
    this.writeFrame(encodePacket(packet, this.version));
  }

  /** Writes one encoded frame (after the RECVACKs queued before it). */
  private writeFrame(frame: Buffer): void {
    if (this.closedError || !this.transport) throw this.closedError ?? new Error('not connected');
    this.flushAcks();
    this.put(frame);
  }

  /**
   * The in-place receive path of an encrypted TCP session whose reads come
   * from the read pump, with the native crypto: its reads join the group that
   * opens many sockets' RECVs in one native call (recv-batch.ts). Reads the
   * group declines come back to {@link onData}.
   */
  private joinRecvBatch(): void {
    const o = this.options;
    const batch = this.crypto?.batchSession;
    const transport = this.transport;
    if (!o.onPayload || o.autoRecvAck === false || !recvBatchEnabled() || batch === undefined || transport?.joinReadGroup === undefined)
      return;
    const group = recvBatchGroup(batch.wk);
    const receiver: BatchReceiver = {
      batchReady: () => this.decoder.bufferedBytes === 0 && this.closedError === undefined,
      readOwn: (buf, start, n) => this.onData(buf, n, start),
      opened: (out, ackAt, ackLen, at, len) => this.onOpened(out, ackAt, ackLen, at, len),
      openedRead: () => this.flushAcks(),
    };
    const fd = transport.idleDescriptor?.() ?? -1;
    const slot = group.join(receiver, batch.session, this.version, this.decoder.maxRemainingLength, fd);
    if (!transport.joinReadGroup(group, slot)) return group.leave(slot);
    this.batchGroup = group;
    this.batchSlot = slot;
  }

  /**
   * Writes `bytes` to the transport: true when it is written, false when the
   * transport holds it. A held write ends the native call's own RECVACK
   * writes (they would pass it); the RECVACKs then queue here behind it.
   */
  private put(bytes: Uint8Array): boolean {
    const done = this.transport!.write(bytes);
    if (!done) this.batchGroup?.stopWrites(this.batchSlot);
    return done;
  }

  /** The RECVACK queue with room for `size` more bytes after `ackBytes`. */
  private ackRoom(size: number): Buffer {
    if (this.acks.length < this.ackBytes + size) {
      // Sized for this RECVACK alone at first (most reads bring one RECV; a full queue is written without a view).
      const grown = Buffer.allocUnsafe(this.ackBytes === 0 ? size : 2 * (this.ackBytes + size));
      if (this.ackBytes > 0) this.acks.copy(grown, 0, 0, this.ackBytes);
      this.acks = grown;
    }
    return this.acks;
  }

  /** One RECV the group opened: its RECVACK queued (written after the read's last), its payload handed on. */
  private onOpened(out: Buffer, ackAt: number, ackLen: number, at: number, len: number): void {
    const acks = this.ackRoom(ackLen);
    let w = this.ackBytes;
    for (let i = ackAt; i < ackAt + ackLen; i++) acks[w++] = out[i]!;
    this.ackBytes = w;
    try {
      this.options.onPayload!(out, at, at + len);
    } catch (e) {
      // As on the decoder's path: a failing handler closes the connection.
      this.transport?.close();
      this.onClosed(e as Error);
    }
  }

  /** Writes the RECVACKs queued by the in-place receive path, as one write. */
  private flushAcks(): void {
    if (this.ackBytes === 0) return;
    // The queue itself goes to the transport; one it holds is given up, and the next read's RECVACKs start a new one.
    const frames = this.ackBytes === this.acks.length ? this.acks : this.acks.subarray(0, this.ackBytes);
    this.ackBytes = 0;
    if (this.closedError || !this.transport || !this.put(frames)) this.acks = NO_ACKS;
  }

  /** The next queued RECV (waits up to `timeoutMs`). */
  nextMessage(timeoutMs = this.timeoutMs): Promise<ReceivedMessage> {
    const queued = this.inbox.shift();
    if (queued) return Promise.resolve(queued);
    if (this.closedError) return Promise.reject(this.closedError);
    let entry: Pending<ReceivedMessage> | undefined;
    const p = new Promise<ReceivedMessage>((resolve, reject) => {
      entry = { resolve, reject };
      this.waiters.push(entry);
    });
    return withTimeout(p, timeoutMs, () => removeItem(this.waiters, entry), 'RECV');
  }

  /** Async iteration over RECVs until the connection closes. */
  async *messages(): AsyncGenerator<ReceivedMessage> {
    for (;;) {
      const queued = this.inbox.shift();
      if (queued) yield queued;
      else if (this.closedError) return;
      else yield await new Promise<ReceivedMessage>((resolve, reject) => this.waiters.push({ resolve, reject }));
    }
  }

  /** Closes the connection; pending requests reject. */
  close(): void {
    this.transport?.close();
    this.onClosed(new Error('client closed'));
  }

  /** The connection's state in a few words: the transport's, and what the decoder holds of an unfinished packet. */
  describeConnection(): string {
    const t = this.transport ? this.transport.describe() : 'no transport';
    return `${t}; decoder holds ${this.decoder.bufferedBytes} bytes${this.connack ? '; CONNACK awaited' : ''}`;
  }

  /** The local TCP port of the connection (undefined over WebSocket or before it is open). */
  get localPort(): number | undefined {
    return this.transport?.localPort;
  }

  /** Closes the connection, pending requests rejecting with `what` and the connection's state. */
  private fail(what: string): void {
    const error = new Error(`${what} (${this.describeConnection()})`);
    this.transport?.close();
    this.onClosed(error);
  }

  private onData(chunk: Buffer, length: number, start: number): void {
    try {
      this.decoder.push(chunk, this.packetHandler, length, start);
    } catch (e) {
      this.transport?.close();
      this.onClosed(e as Error);
    }
    this.flushAcks();
  }

  /**
   * The in-place receive path (with `onPayload`): a RECV of the common shape
   * is verified, decrypted, acknowledged and handed over from the frame's
   * bytes; anything else (and any failure, to report it) goes through the
   * reference decoder and {@link onRecv}, which decide alike.
   */
  private onRecvBody(buf: Buffer, start: number, end: number, flags: number): void {
    const v = this.view;
    if (!scanRecv(buf, start, end, this.version, flags, v))
      return this.onPacket(decodeBody(PacketType.RECV, flags, buf, start, end, this.version));
    let out = buf;
    let from = v.payloadAt;
    let to = v.end;
    const c = this.crypto;
    if (c && (v.setting & Setting.NO_ENCRYPT) === 0) {
      const n = c.openRecvView(v);
      if (n < 0) return this.onPacket(decodeBody(PacketType.RECV, flags, buf, start, end, this.version));
      out = c.opened;
      from = 0;
      to = n;
    }
    if (this.options.autoRecvAck !== false) {
      if (this.closedError || !this.transport) throw this.closedError ?? new Error('not connected');
      this.ackBytes = writeRecvack(this.ackRoom(recvackFrameBytes(this.version)), this.ackBytes, v);
    }
    this.options.onPayload!(out, from, to);
  }

  private onPacket(p: WkPacket): void {
    switch (p.type) {
      case PacketType.CONNACK:
        if (this.connack) this.onConnack(p);
        return;
      case PacketType.SENDACK: {
        const pending = this.pendingSends.get(p.clientSeq);
        this.pendingSends.delete(p.clientSeq);
        pending?.resolve(p);
        return;
      }
      case PacketType.PONG:
        this.pendingPings.shift()?.resolve();
        return;
      case PacketType.RECV:
        return this.onRecv(p);
      case PacketType.DISCONNECT:
        this.emit('disconnect', p satisfies DisconnectPacket);
        return;
      default:
        // An EVENT's data is a view of the read; with a shared read buffer (onPayload) it must outlive it.
        if (p.type === PacketType.EVENT && this.options.onPayload) p.data = Buffer.from(p.data);
        this.emit('packet', p);
    }
  }

  private onRecv(p: RecvPacket): void {
    let payload: Buffer;
    try {
      payload = this.crypto ? this.crypto.openRecv(p) : Buffer.from(p.payload);
    } catch (e) {
      this.emit('recv-error', e);
      return;
    }
    if (this.options.autoRecvAck !== false) this.recvAck(p.messageId, p.messageSeq);
    const onPayload = this.options.onPayload;
    if (onPayload) return onPayload(payload, 0, payload.length);
    const m: ReceivedMessage = { packet: p, payload };
    this.emit('recv', m);
    if (this.options.bufferMessages === false) return;
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(m);
    else this.inbox.push(m);
  }

  private onClosed(error: Error): void {
    if (this.closedError) return;
    this.closedError = error;
    if (this.batchGroup !== undefined) {
      this.transport?.leaveReadGroup?.();
      this.batchGroup.leave(this.batchSlot);
      this.batchGroup = undefined;
    }
    this.connack?.reject(error);
    for (const s of this.pendingSends.values()) s.reject(error);
    this.pendingSends.clear();
    for (const p of this.pendingPings.splice(0)) p.reject(error);
    for (const w of this.waiters.splice(0)) w.reject(error);
    this.emit('close', error);
  }
}
