/**
 * The generator's own WebSocket client (RFC 6455, `ws:` URLs, text messages,
 * no extensions): what the JSON-RPC connections run on. The `ws` package's
 * client builds an HTTP ClientRequest, an HTTP response parser, and a
 * receiver and sender per connection; in the connection storm (S4) that set-up
 * was most of the generator's JavaScript per connect and took its core to the
 * `generator-cpu` gate's limit. Here a connect is one socket, one upgrade
 * request written as text, the 101 answer checked (status line and
 * `Sec-WebSocket-Accept`), then frames read in place from the shared read
 * buffer: text messages (fragmented ones joined), close answered, ping
 * answered with pong. Every frame written is masked with a random key, as a
 * client must.
 */
import { Buffer } from 'node:buffer';
import { createHash, randomBytes, randomFillSync } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import { DirectWriter, takeReads } from '@parley/protocol/net';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** Longest 101 answer read (status line and headers), bytes. */
const MAX_HANDSHAKE_BYTES = 16 * 1024;
/** Longest message accepted (a frame, or the frames of one fragmented message), bytes. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** How long a closing connection waits for the server's close before dropping the socket, ms. */
const CLOSE_WAIT_MS = 1000;

const OP_CONTINUATION = 0x0;
const OP_TEXT = 0x1;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const OP_PONG = 0xa;

/** Random masking keys, taken four bytes at a time from a pool refilled when used up. */
const maskPool = Buffer.allocUnsafe(4096);
let maskAt = maskPool.length;

/** What a connection tells its owner. */
export interface WsClientEvents {
  /** The server accepted the upgrade. */
  open(): void;
  /** One whole text message, its UTF-8 bytes `buf[start, end)` (readable during the call only). */
  text(buf: Buffer, start: number, end: number): void;
  /** The connection is over: `err` when it failed (refused upgrade, protocol error, socket error), once. */
  closed(err: Error | undefined): void;
}

/**
 * Takes whole frames at the front of a read, `buf[start, end)`, before the
 * frame parser sees it (called only while no partial frame or fragmented
 * message is held): returns where the frames it took end.
 */
export type FrontReader = (buf: Uint8Array, start: number, end: number) => number;

/** A client frame of `payload` (`op`, FIN set), masked with a fresh random key. */
function maskedFrame(op: number, payload: Uint8Array): Buffer {
  const n = payload.length;
  const head = n < 126 ? 2 : n <= 0xffff ? 4 : 10;
  const f = Buffer.allocUnsafe(head + 4 + n);
  f[0] = 0x80 | op;
  if (head === 2) f[1] = 0x80 | n;
  else if (head === 4) {
    f[1] = 0x80 | 126;
    f.writeUInt16BE(n, 2);
  } else {
    f[1] = 0x80 | 127;
    f.writeUInt32BE(Math.floor(n / 2 ** 32), 2);
    f.writeUInt32BE(n >>> 0, 6);
  }
  if (maskAt + 4 > maskPool.length) {
    randomFillSync(maskPool);
    maskAt = 0;
  }
  const k = head;
  f[k] = maskPool[maskAt]!;
  f[k + 1] = maskPool[maskAt + 1]!;
  f[k + 2] = maskPool[maskAt + 2]!;
  f[k + 3] = maskPool[maskAt + 3]!;
  maskAt += 4;
  const d = head + 4;
  for (let i = 0; i < n; i++) f[d + i] = payload[i]! ^ f[k + (i & 3)]!;
  return f;
}

/** One client connection; see the module comment. */
export class WsClient {
  private readonly socket: Socket;
  /** Frames go straight to the socket's handle while nothing is queued (`DirectWriter`). */
  private readonly writer: DirectWriter;
  private state: 'handshake' | 'open' | 'closing' | 'closed' = 'handshake';
  /** Bytes of an unfinished handshake answer or frame, kept across reads. */
  private pending: Buffer | undefined;
  /** The frames so far of a fragmented text message. */
  private fragments: Buffer[] | undefined;
  private fragmentBytes = 0;
  private readonly accept: string;
  /** Reads whole frames at the front of each read first, once set (see {@link FrontReader}). */
  front: FrontReader | undefined;

  constructor(
    url: string,
    private readonly on: WsClientEvents,
  ) {
    const u = new URL(url);
    if (u.protocol !== 'ws:') throw new Error(`the bench's WebSocket client speaks ws: only, not ${u.protocol}`);
    const key = randomBytes(16).toString('base64');
    this.accept = createHash('sha1')
      .update(key + GUID)
      .digest('base64');
    const request =
      `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
    this.socket = netConnect({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 80), noDelay: true });
    this.writer = new DirectWriter(this.socket);
    // Reads are taken from the handle into the shared read buffer; any the handle path leaves (a paused socket) come as `data`.
    this.socket.on('data', (chunk: Buffer) => this.onRead(chunk, 0, chunk.length));
    this.socket.once('connect', () => {
      takeReads(this.socket, (buf, start, n) => (this.onRead(buf, start, start + n), true));
      this.socket.write(request, 'latin1');
    });
    this.socket.on('error', (e) => this.finish(e));
    this.socket.on('close', () =>
      this.finish(this.state === 'handshake' ? new Error('the connection closed before the WebSocket upgrade was answered') : undefined),
    );
  }

  /** Sends one text message. */
  sendText(text: string): void {
    if (this.state !== 'open') return;
    this.writer.write(maskedFrame(OP_TEXT, Buffer.from(text, 'utf8')));
  }

  /**
   * Writes frames the caller built and masked itself (the front reader's
   * acknowledgements): true when they are written and the caller may reuse
   * the buffer, false when the socket holds it until they are (or the
   * connection is not open).
   */
  writeFrames(frames: Uint8Array): boolean {
    return this.state === 'open' && this.writer.write(frames);
  }

  /** Starts the closing handshake (code 1000) and ends the socket; drops it if the server does not close in time. */
  close(): void {
    if (this.state === 'closed' || this.state === 'closing') return;
    if (this.state === 'handshake') return this.terminate();
    this.state = 'closing';
    this.socket.end(maskedFrame(OP_CLOSE, Buffer.from([0x03, 0xe8])));
    setTimeout(() => this.socket.destroy(), CLOSE_WAIT_MS).unref();
  }

  /** Drops the connection at once. */
  terminate(): void {
    this.socket.destroy();
  }

  private fail(message: string): void {
    const err = new Error(message);
    this.socket.destroy();
    this.finish(err);
  }

  private finish(err: Error | undefined): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.pending = undefined;
    this.fragments = undefined;
    this.on.closed(err);
  }

  private onRead(buf: Uint8Array, start: number, end: number): void {
    if (this.state === 'closed') return;
    let data: Buffer;
    let at = start;
    const pending = this.pending;
    if (pending === undefined) {
      if (this.front !== undefined && this.state === 'open' && this.fragments === undefined) {
        at = this.front(buf, start, end);
        if (at >= end) return;
      }
      // The read's bytes keep their place (`at` is where the rest starts).
      data = Buffer.from(buf.buffer, buf.byteOffset, end);
    } else {
      this.pending = undefined;
      data = Buffer.concat([pending, buf.subarray(start, end)]);
      at = 0;
    }
    if (this.state === 'handshake') {
      at = this.handshake(data, at);
      if (at < 0) return;
    }
    this.frames(data, at);
  }

  /** Reads the 101 answer from `data[at…]`: where the frames start, or -1 (more to come, or failed). */
  private handshake(data: Buffer, at: number): number {
    const end = data.indexOf('\r\n\r\n', at, 'latin1');
    if (end < 0) {
      if (data.length - at > MAX_HANDSHAKE_BYTES) this.fail('the WebSocket upgrade answer is too long');
      else this.pending = Buffer.from(data.subarray(at));
      return -1;
    }
    const lines = data.toString('latin1', at, end).split('\r\n');
    if (!/^HTTP\/1\.1 101 /.test(lines[0] ?? '')) {
      this.fail(`the WebSocket upgrade was refused: ${lines[0]}`);
      return -1;
    }
    let accept: string | undefined;
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === 'sec-websocket-accept') accept = line.slice(colon + 1).trim();
    }
    if (accept !== this.accept) {
      this.fail('the WebSocket upgrade answer has a wrong Sec-WebSocket-Accept');
      return -1;
    }
    this.state = 'open';
    this.on.open();
    return this.state === 'open' ? end + 4 : -1;
  }

  /** Handles the whole frames of `data[at…]` and keeps a copy of an unfinished one. */
  private frames(data: Buffer, at: number): void {
    const end = data.length;
    while (end - at >= 2) {
      const b0 = data[at]!;
      const b1 = data[at + 1]!;
      if ((b1 & 0x80) !== 0) return this.fail('the server sent a masked frame');
      if ((b0 & 0x70) !== 0) return this.fail('the server set a reserved bit (no extension was agreed)');
      let len = b1 & 0x7f;
      let p = at + 2;
      if (len === 126) {
        if (end - p < 2) break;
        len = data.readUInt16BE(p);
        p += 2;
      } else if (len === 127) {
        if (end - p < 8) break;
        const high = data.readUInt32BE(p);
        if (high !== 0) return this.fail('a frame longer than the bench accepts');
        len = data.readUInt32BE(p + 4);
        p += 8;
      }
      if (len > MAX_MESSAGE_BYTES) return this.fail('a frame longer than the bench accepts');
      if (end - p < len) break;
      this.frame((b0 & 0x80) !== 0, b0 & 0x0f, data, p, p + len);
      if (this.state === 'closed') return;
      at = p + len;
    }
    if (at < end) this.pending = Buffer.from(data.subarray(at));
  }

  private frame(fin: boolean, op: number, data: Buffer, start: number, end: number): void {
    if (op >= OP_CLOSE) {
      if (!fin || end - start > 125) return this.fail('a fragmented or long control frame');
      if (op === OP_CLOSE) {
        if (this.state === 'open') this.socket.end(maskedFrame(OP_CLOSE, data.subarray(start, Math.min(end, start + 2))));
        this.state = 'closing';
      } else if (op === OP_PING) {
        if (this.state === 'open') this.socket.write(maskedFrame(OP_PONG, data.subarray(start, end)));
      } else if (op !== OP_PONG) this.fail(`unknown control frame ${op}`);
      return;
    }
    if (op === OP_TEXT) {
      if (this.fragments !== undefined) return this.fail('a text frame inside a fragmented message');
      if (fin) {
        if (this.state === 'open') this.on.text(data, start, end);
        return;
      }
      this.fragments = [Buffer.from(data.subarray(start, end))];
      this.fragmentBytes = end - start;
      return;
    }
    if (op === OP_CONTINUATION) {
      if (this.fragments === undefined) return this.fail('a continuation frame without a message');
      this.fragmentBytes += end - start;
      if (this.fragmentBytes > MAX_MESSAGE_BYTES) return this.fail('a message longer than the bench accepts');
      this.fragments.push(Buffer.from(data.subarray(start, end)));
      if (!fin) return;
      const whole = Buffer.concat(this.fragments);
      this.fragments = undefined;
      if (this.state === 'open') this.on.text(whole, 0, whole.length);
      return;
    }
    this.fail(`the server sent frame opcode ${op} (the bench reads text only)`);
  }
}
