/**
 * Streaming WKProto decoder for a connection's inbound byte stream (TCP reads
 * or WebSocket messages, which realtime.md §1 treats as one byte stream).
 *
 * Hot-path design:
 * - a packet wholly inside a chunk is decoded in place from that chunk (its
 *   `payload` is a view of the chunk, no copy);
 * - only a packet split across chunks is assembled, into one buffer allocated
 *   at exactly its declared body size once its header is known;
 * - a header split across chunks is kept in a fixed 5-byte scratch buffer.
 * So the decoder never holds more than one body (≤ maxRemainingLength) plus a
 * 5-byte header. Any violation throws a {@link WkprotoDecodeError}; the
 * decoder then stays failed and the caller closes the connection.
 */
import { Buffer } from 'node:buffer';
import { MAX_HEADER_BYTES, MAX_REMAINING_LENGTH, PacketType } from './constants.ts';
import { assertDecodeVersion, decodeBody } from './decode.ts';
import { WkprotoDecodeError } from './errors.ts';
import { readFrameHeader, type FrameHeader } from './varint.ts';
import type { WkPacket } from './types.ts';

/** Options of {@link WkprotoDecoder}. */
export interface WkprotoDecoderOptions {
  /** Protocol version used for version-dependent bodies (default 5; set it after CONNECT). */
  version?: number;
  /** Largest accepted remaining length in bytes (default and maximum: 1 MiB). */
  maxRemainingLength?: number;
}

/** Receives each decoded packet, in stream order. */
export type PacketHandler = (packet: WkPacket) => void;

/** Receives the body `buf[start, end)` of a packet undecoded (read during the call only), with its header flags. */
export type RawBodyHandler = (buf: Buffer, start: number, end: number, flags: number) => void;

const asBuffer = (chunk: Uint8Array): Buffer =>
  Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);

/** Incremental decoder: feed arbitrary chunks with {@link push}. */
export class WkprotoDecoder {
  private maxLength: number;
  private versionValue: number;
  private readonly header: FrameHeader = { type: 0, flags: 0, headerSize: 0, remainingLength: 0 };
  private readonly head = Buffer.alloc(MAX_HEADER_BYTES);
  private headLen = 0;
  private body: Buffer | undefined;
  private bodyFilled = 0;
  private bodyType = 0;
  private bodyFlags = 0;
  private failure: Error | undefined;
  /**
   * When set, RECV bodies go to this handler undecoded instead of being
   * decoded for `onPacket` (a client's in-place receive path); every other
   * packet type is decoded as usual. Stream order is kept.
   */
  onRecvBody: RawBodyHandler | undefined;
  /**
   * When set, RECVACK bodies go to this handler undecoded instead of being
   * decoded for `onPacket` (a server's acknowledgement path, one per
   * delivered message; {@link recvackMessageIdText} reads the id). Every
   * other packet type is decoded as usual. Stream order is kept.
   */
  onRecvackBody: RawBodyHandler | undefined;

  constructor(options: WkprotoDecoderOptions = {}) {
    const max = options.maxRemainingLength ?? MAX_REMAINING_LENGTH;
    if (!Number.isInteger(max) || max < 0 || max > MAX_REMAINING_LENGTH) {
      throw new RangeError(`maxRemainingLength must be an integer in [0, ${MAX_REMAINING_LENGTH}]`);
    }
    this.maxLength = max;
    this.versionValue = options.version ?? 5;
    assertDecodeVersion(this.versionValue);
  }

  /**
   * Largest accepted remaining length in bytes. May be changed between packets
   * (a gateway accepts only a CONNECT-sized packet before CONNECT completes,
   * then the full limit); a packet already being assembled keeps its size.
   */
  get maxRemainingLength(): number {
    return this.maxLength;
  }

  set maxRemainingLength(max: number) {
    if (!Number.isInteger(max) || max < 0 || max > MAX_REMAINING_LENGTH) {
      throw new RangeError(`maxRemainingLength must be an integer in [0, ${MAX_REMAINING_LENGTH}]`);
    }
    this.maxLength = max;
  }

  /** Protocol version applied to the next decoded body; may be changed from inside a handler. */
  get version(): number {
    return this.versionValue;
  }

  set version(v: number) {
    assertDecodeVersion(v);
    this.versionValue = v;
  }

  /** Stream bytes received but not yet emitted as packets (≤ maxRemainingLength + 5). */
  get bufferedBytes(): number {
    return this.headLen + (this.body ? this.bodyFilled + this.header.headerSize : 0);
  }

  /** The error that failed this decoder, if any. */
  get error(): Error | undefined {
    return this.failure;
  }

  /**
   * Consumes `chunk` (`length` bytes from `start` on: a shared read buffer
   * need not be cut to a view per read), calling `onPacket` for every packet
   * it completes. Throws {@link WkprotoDecodeError} on a contract violation;
   * if `onPacket` throws, that error propagates. Either way the decoder is
   * failed afterwards.
   */
  push(chunk: Uint8Array, onPacket: PacketHandler, length = chunk.length, start = 0): void {
    if (this.failure) throw this.failure;
    try {
      this.consume(asBuffer(chunk), onPacket, start, Math.min(start + length, chunk.length));
    } catch (e) {
      this.failure = e instanceof Error ? e : new WkprotoDecodeError('DECODER_FAILED', String(e));
      this.body = undefined;
      this.headLen = 0;
      throw this.failure;
    }
  }

  /** Convenience for tests and cold paths: the packets completed by `chunk`. */
  decodeAll(chunk: Uint8Array): WkPacket[] {
    const out: WkPacket[] = [];
    this.push(chunk, (p) => out.push(p));
    return out;
  }

  private consume(buf: Buffer, onPacket: PacketHandler, start: number, end: number): void {
    let pos = start;
    if (this.body) {
      pos = this.fillBody(buf, pos, end, onPacket);
      if (this.body) return;
    }
    if (this.headLen > 0) {
      pos = this.fillHead(buf, pos, end, onPacket);
      if (this.headLen > 0 || this.body) return;
    }
    const h = this.header;
    while (pos < end) {
      if (!readFrameHeader(buf, pos, end, this.maxRemainingLength, h)) {
        buf.copy(this.head, 0, pos, end);
        this.headLen = end - pos;
        return;
      }
      const bodyStart = pos + h.headerSize;
      const bodyEnd = bodyStart + h.remainingLength;
      if (bodyEnd > end) {
        this.startBody(buf, bodyStart, end);
        return;
      }
      this.emit(h.type, h.flags, buf, bodyStart, bodyEnd, onPacket);
      pos = bodyEnd;
    }
  }

  /** Completes a split header byte by byte (at most 5 bytes), then its body. */
  private fillHead(buf: Buffer, pos: number, end: number, onPacket: PacketHandler): number {
    const h = this.header;
    while (pos < end) {
      this.head[this.headLen++] = buf[pos++] as number;
      if (readFrameHeader(this.head, 0, this.headLen, this.maxRemainingLength, h)) {
        this.headLen = 0;
        const avail = end - pos;
        if (avail >= h.remainingLength) {
          this.emit(h.type, h.flags, buf, pos, pos + h.remainingLength, onPacket);
          return pos + h.remainingLength;
        }
        this.startBody(buf, pos, end);
        return end;
      }
    }
    return pos;
  }

  /**
   * Hands one complete body to {@link onRecvBody} (RECV, when set), to
   * {@link onRecvackBody} (RECVACK, when set) or decodes it for `onPacket`.
   */
  private emit(type: number, flags: number, buf: Buffer, start: number, end: number, onPacket: PacketHandler): void {
    const raw = type === PacketType.RECV ? this.onRecvBody : type === PacketType.RECVACK ? this.onRecvackBody : undefined;
    if (raw !== undefined) raw(buf, start, end, flags);
    else onPacket(decodeBody(type, flags, buf, start, end, this.versionValue));
  }

  private startBody(buf: Buffer, from: number, end: number): void {
    const h = this.header;
    this.body = Buffer.allocUnsafe(h.remainingLength);
    this.bodyFilled = buf.copy(this.body, 0, from, end);
    this.bodyType = h.type;
    this.bodyFlags = h.flags;
  }

  private fillBody(buf: Buffer, pos: number, end: number, onPacket: PacketHandler): number {
    const body = this.body as Buffer;
    const take = Math.min(body.length - this.bodyFilled, end - pos);
    buf.copy(body, this.bodyFilled, pos, pos + take);
    this.bodyFilled += take;
    if (this.bodyFilled < body.length) return pos + take;
    this.body = undefined;
    this.bodyFilled = 0;
    this.emit(this.bodyType, this.bodyFlags, body, 0, body.length, onPacket);
    return pos + take;
  }
}
