/**
 * The few MQTT 3.1.1 packets the generator needs, written straight to a
 * socket: CONNECT (no keep-alive; a clean session, or a persistent one under
 * a stable client id), SUBSCRIBE at QoS 1, PUBLISH QoS 1 resolved by its
 * PUBACK, a PUBACK for every QoS 1 PUBLISH received, and DISCONNECT.
 * mosquitto sees the same packets as from the `mqtt` package; the PUBACKs of
 * the PUBLISHes that arrive in one TCP read go out in one write (the `mqtt`
 * package's writes coalesce the same way once its socket is busy), which
 * matters only for bursts such as a persistent session's queued messages on
 * reconnect (where a client may also hold its PUBACKs until several are due:
 * `ackEvery`). The generator spends far less CPU per delivery than with that
 * package (no stream pipeline, debug logging or buffer lists), which is what
 * kept the group staircase from climbing and S3's catch-up from saturating
 * the generator. Anything unexpected closes the client.
 */
import { Buffer } from 'node:buffer';
import { connect as netConnect, type Socket } from 'node:net';
import { DirectWriter, takeReads } from '@parley/protocol/net';
import { deadline } from '../deadlines.ts';

const CONNECT = 1;
const CONNACK = 2;
const PUBLISH = 3;
const PUBACK = 4;
const SUBSCRIBE = 8;
const SUBACK = 9;
const DISCONNECT = 14;

/** Largest packet this client accepts from the broker, bytes. */
const MAX_PACKET = 1 << 20;

function varintSize(n: number): number {
  return n < 128 ? 1 : n < 16_384 ? 2 : n < 2_097_152 ? 3 : 4;
}

function writeVarint(buf: Buffer, at: number, n: number): number {
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    buf[at++] = b;
  } while (n > 0);
  return at;
}

/** A packet of `first` byte and body `parts` (strings are length-prefixed UTF-8, numbers 16-bit, buffers raw). */
function packet(first: number, parts: readonly (string | number | Buffer)[]): Buffer {
  let body = 0;
  for (const p of parts) body += typeof p === 'string' ? 2 + Buffer.byteLength(p) : typeof p === 'number' ? 2 : p.length;
  const buf = Buffer.allocUnsafe(1 + varintSize(body) + body);
  buf[0] = first;
  let at = writeVarint(buf, 1, body);
  for (const p of parts) {
    if (typeof p === 'number') at = buf.writeUInt16BE(p, at);
    else if (typeof p === 'string') {
      const n = buf.write(p, at + 2, 'utf8');
      buf.writeUInt16BE(n, at);
      at += 2 + n;
    } else at += p.copy(buf, at);
  }
  return buf;
}

/** Options of {@link MqttLite.connect}. */
export interface MqttLiteOptions {
  host: string;
  port: number;
  clientId: string;
  username: string;
  password: string;
  timeoutMs: number;
  /**
   * Clean session (default true). False keeps the session (subscriptions and
   * undelivered QoS 1 messages) at the broker under `clientId` after the
   * client goes away, and resumes it on the next CONNECT with that id.
   */
  clean?: boolean;
  /**
   * Every PUBLISH received: its payload is `buf[start, end)`, its topic's
   * UTF-8 `buf[topicStart, topicEnd)` (a QoS 1 one's PUBACK is written at the
   * end of the read that brought it, or of a later one: `ackEvery`). `buf` is
   * often the reused read buffer: valid during the call only. Nothing is
   * copied or decoded per message; the callback reads what it needs.
   */
  onMessage: (buf: Buffer, start: number, end: number, topicStart: number, topicEnd: number) => void;
  /**
   * PUBACKs written together (default 1: those of each read, at its end).
   * With N > 1 a read's PUBACKs wait until N are due, and `close` writes what
   * is left before its DISCONNECT. N must not exceed the broker's inflight
   * window (`max_inflight_messages`), or the broker would wait for PUBACKs
   * this client holds back.
   */
  ackEvery?: number;
}

interface Waiter {
  resolve: () => void;
  reject: (e: Error) => void;
}

/** One MQTT 3.1.1 client connection (QoS ≤ 1). */
export class MqttLite {
  /** Whether the broker resumed a stored session (CONNACK's session-present flag). */
  sessionPresent = false;
  private pending: Buffer | undefined;
  /** Packet ids of the QoS 1 PUBLISHes not acknowledged yet: written at the end of a read once `ackEvery` are due. */
  private acks: number[] = [];
  private readonly ackEvery: number;
  private nextId = 0;
  private readonly waiting = new Map<number, Waiter>();
  private connack: Waiter | undefined;
  private closed: Error | undefined;
  /** Settles when the socket has closed. */
  private readonly gone: Promise<void>;
  /** Packets go straight to the socket's handle while nothing is queued (`DirectWriter`), not through the Writable. */
  private readonly writer: DirectWriter;

  private constructor(
    private readonly socket: Socket,
    private readonly onMessage: MqttLiteOptions['onMessage'],
    ackEvery = 1,
  ) {
    this.ackEvery = ackEvery;
    this.writer = new DirectWriter(socket);
    socket.setNoDelay(true);
    // Reads are taken before Node's Readable (`takeReads`: where @parley/readpump is built, many
    // sockets' reads in one call per event-loop turn, else the handle's own read callback); a read
    // not offered there (a paused socket) comes as `data`. `onData` handles each read wholly before
    // the next and copies only a packet left incomplete at its end.
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.once('connect', () => takeReads(socket, (buf, start, n) => (this.onData(buf.subarray(start, start + n)), true)));
    socket.on('error', (e) => this.fail(e));
    this.gone = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('close', () => {
      if (!this.closed) this.fail(new Error('connection closed'));
    });
  }

  /** Connects and resolves after a CONNACK accepting the session. */
  static async connect(o: MqttLiteOptions): Promise<MqttLite> {
    if (o.ackEvery !== undefined && (!Number.isInteger(o.ackEvery) || o.ackEvery < 1))
      throw new Error(`ackEvery must be a positive integer, not ${o.ackEvery}`);
    const socket = netConnect({ host: o.host, port: o.port });
    const client = new MqttLite(socket, o.onMessage, o.ackEvery);
    const accepted = new Promise<void>((resolve, reject) => (client.connack = { resolve, reject }));
    // Protocol "MQTT" level 4; flags: username, password, clean session (unless o.clean is false); keep-alive 0.
    const flags = o.clean === false ? 0xc0 : 0xc2;
    // Queued by the socket until it connects (a direct write needs a connected handle).
    client.writer.write(packet(CONNECT << 4, ['MQTT', Buffer.from([4, flags, 0, 0]), o.clientId, o.username, o.password]));
    const cancel = deadline(o.timeoutMs, () => client.fail(new Error(`MQTT CONNACK timed out after ${o.timeoutMs} ms`)));
    try {
      await accepted;
    } finally {
      cancel();
    }
    return client;
  }

  private id(): number {
    this.nextId = (this.nextId % 0xffff) + 1;
    return this.nextId;
  }

  private request(id: number, frame: Buffer): Promise<void> {
    if (this.closed) return Promise.reject(this.closed);
    if (this.waiting.has(id)) return Promise.reject(new Error(`MQTT packet id ${id} is still in flight`));
    const done = new Promise<void>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.writer.write(frame);
    return done;
  }

  /** Subscribes to `topics` at QoS 1; resolves at a SUBACK granting all of them. */
  subscribe(topics: readonly string[]): Promise<void> {
    const id = this.id();
    return this.request(id, packet((SUBSCRIBE << 4) | 0x02, [id, ...topics.flatMap((t) => [t, Buffer.from([1])])]));
  }

  /** Publishes at QoS 1; resolves at its PUBACK. */
  publish(topic: string, payload: string): Promise<void> {
    const id = this.id();
    return this.request(id, packet((PUBLISH << 4) | 0x02, [topic, id, Buffer.from(payload, 'utf8')]));
  }

  /**
   * Sends DISCONNECT (after any PUBACKs written before) and ends the socket;
   * the promise settles once the socket has closed, that is once the broker
   * has read everything up to the DISCONNECT (callers need not wait for it).
   */
  close(): Promise<void> {
    if (!this.closed && !this.socket.destroyed) {
      if (this.acks.length > 0) this.flushAcks();
      this.socket.end(Buffer.from([DISCONNECT << 4, 0]));
    }
    this.fail(new Error('client closed'));
    return this.gone;
  }

  private fail(e: Error): void {
    if (this.closed) return;
    this.closed = e;
    this.connack?.reject(e);
    this.connack = undefined;
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
    if (e.message !== 'client closed') this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    let at = 0;
    while (at < buf.length) {
      // Fixed header: type/flags byte, then the remaining length (1-4 bytes, 7 bits each).
      let len = 0;
      let mul = 1;
      let i = at + 1;
      let complete = false;
      while (i < buf.length && i < at + 5) {
        const b = buf[i++]!;
        len += (b & 0x7f) * mul;
        mul *= 128;
        if ((b & 0x80) === 0) {
          complete = true;
          break;
        }
      }
      if (!complete) {
        if (i >= at + 5) return this.fail(new Error('MQTT remaining length over 4 bytes'));
        break;
      }
      if (len > MAX_PACKET) return this.fail(new Error(`MQTT packet of ${len} bytes`));
      if (buf.length - i < len) break;
      const err = this.onPacket(buf[at]!, buf, i, i + len);
      if (err) return this.fail(err);
      at = i + len;
    }
    if (at < buf.length) this.pending = Buffer.from(buf.subarray(at));
    if (this.acks.length >= this.ackEvery) this.flushAcks();
  }

  /** Writes the PUBACKs due (this read's QoS 1 PUBLISHes, and any held back before) as one buffer. */
  private flushAcks(): void {
    const ids = this.acks;
    this.acks = [];
    if (this.closed) return;
    const out = Buffer.allocUnsafe(4 * ids.length);
    for (let i = 0; i < ids.length; i++) {
      out[4 * i] = PUBACK << 4;
      out[4 * i + 1] = 2;
      out.writeUInt16BE(ids[i]!, 4 * i + 2);
    }
    this.writer.write(out);
  }

  /** Handles one packet whose body is buf[start, end); returns an error to close with. */
  private onPacket(first: number, buf: Buffer, start: number, end: number): Error | undefined {
    switch (first >> 4) {
      case PUBLISH: {
        const qos = (first >> 1) & 3;
        if (qos > 1) return new Error('MQTT QoS 2 PUBLISH was not subscribed to');
        const topicEnd = start + 2 + ((buf[start]! << 8) | buf[start + 1]!);
        const at = qos === 1 ? topicEnd + 2 : topicEnd;
        if (at > end) return new Error('MQTT PUBLISH shorter than its topic');
        if (qos === 1) this.acks.push((buf[topicEnd]! << 8) | buf[topicEnd + 1]!);
        this.onMessage(buf, at, end, start + 2, topicEnd);
        return undefined;
      }
      case PUBACK:
        return this.settle(buf.readUInt16BE(start));
      case SUBACK: {
        for (let i = start + 2; i < end; i++) if (buf[i] === 0x80) return new Error('MQTT SUBSCRIBE refused');
        return this.settle(buf.readUInt16BE(start));
      }
      case CONNACK: {
        const rc = buf[start + 1];
        if (rc !== 0) return new Error(`MQTT CONNACK return code ${rc}`);
        this.sessionPresent = (buf[start]! & 1) === 1;
        this.connack?.resolve();
        this.connack = undefined;
        return undefined;
      }
      default:
        return new Error(`unexpected MQTT packet type ${first >> 4}`);
    }
  }

  private settle(id: number): undefined {
    const w = this.waiting.get(id);
    this.waiting.delete(id);
    w?.resolve();
    return undefined;
  }
}
