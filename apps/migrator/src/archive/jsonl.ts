import { Buffer } from 'node:buffer';
import { closeSync, fsync, openSync, readSync, writeSync } from 'node:fs';
import { promisify } from 'node:util';
import type { FileDigest } from './file-digest.ts';
import type { ByteOut } from './json-bytes.ts';
import { digestFiles } from './hasher.ts';

const fsyncAsync = promisify(fsync);

/** Bytes buffered before a write (records are small; payloads up to a few hundred KiB). */
const CHUNK = 1 << 20;
/**
 * Buffers of closed writers, for the next ones: a stage opens nine writers
 * and a process may run stages again; fresh megabytes each time would only
 * grow the garbage the collector has to chase.
 */
const spareBuffers: Buffer[] = [];
const MAX_SPARE = 16;

/**
 * A JSON Lines file written in one stream: one record per line. Created
 * owner-only (0600) and exclusive: it never overwrites. Once written and
 * flushed to disk it is hashed on the hashing thread (the main thread goes
 * on meanwhile).
 * Lines are encoded straight into one reused buffer; `text`, `bytes` and
 * `endLine` let a caller assemble a line from parts it has already encoded.
 */
export class JsonlWriter implements ByteOut {
  private readonly fd: number;
  /** Bytes of the current chunk, encoded and not yet written (`ByteOut`: callers may encode into it after `reserve`). */
  buf = spareBuffers.pop() ?? Buffer.allocUnsafe(CHUNK);
  used = 0;
  private count = 0;
  private bytesWritten = 0;
  private closing: Promise<FileDigest> | undefined;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'wx', 0o600);
  }

  /** Appends one record as a line of JSON. */
  write(record: object): void {
    this.writeLine(JSON.stringify(record));
  }

  /** Appends a line whose JSON is already encoded (`json` holds no newline). */
  writeLine(json: string): void {
    this.text(json);
    if (this.used === this.buf.length) this.flush();
    this.buf[this.used++] = 10;
    this.count++;
  }

  /** Appends the UTF-8 of `s` to the current line. */
  text(s: string): void {
    // a UTF-16 code unit takes at most 3 bytes in UTF-8
    if (s.length * 3 > this.buf.length - this.used) {
      this.flush();
      if (s.length * 3 > this.buf.length) {
        this.emit(Buffer.from(s, 'utf8'));
        return;
      }
    }
    // (write's default encoding is UTF-8; naming it costs as much as the write of a short line)
    this.used += this.buf.write(s, this.used);
  }

  /** Makes room for `n` more bytes in `buf` at `used`: writes what is buffered, or moves to a buffer that large. */
  reserve(n: number): void {
    if (n <= this.buf.length - this.used) return;
    this.flush();
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
  }

  /** Appends encoded bytes to the current line. */
  bytes(b: Uint8Array): void {
    if (b.length > this.buf.length - this.used) {
      this.flush();
      if (b.length > this.buf.length) {
        this.emit(b);
        return;
      }
    }
    this.buf.set(b, this.used);
    this.used += b.length;
  }

  /** Counts a line assembled with `text`/`bytes`; it must have ended with a newline. */
  endLine(): void {
    this.count++;
  }

  private flush(): void {
    if (this.used === 0) return;
    this.emit(this.buf.subarray(0, this.used));
    this.used = 0;
  }

  private emit(chunk: Uint8Array): void {
    this.bytesWritten += chunk.length;
    let off = 0;
    while (off < chunk.length) off += writeSync(this.fd, chunk, off);
  }

  /**
   * Flushes, fsyncs (on the libuv thread pool, so several files sync at once),
   * closes and hashes what is on disk; returns the file's digest. Calling it
   * again returns the same.
   */
  close(): Promise<FileDigest> {
    this.closing ??= this.finish();
    return this.closing;
  }

  private async finish(): Promise<FileDigest> {
    this.flush();
    if (spareBuffers.length < MAX_SPARE && this.buf.length === CHUNK) spareBuffers.push(this.buf);
    try {
      await fsyncAsync(this.fd);
    } finally {
      closeSync(this.fd);
    }
    const [written] = await digestFiles([this.path], false);
    if (written!.bytes !== this.bytesWritten) {
      throw new Error(`${this.path} holds ${written!.bytes} bytes after writing ${this.bytesWritten}: changed by someone else`);
    }
    return { sha256: written!.sha256, count: this.count, bytes: this.bytesWritten };
  }
}

/** Streams the lines of a JSON Lines file as parsed records. */
export function* readJsonl<T>(path: string): Generator<T> {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let rest: Buffer = Buffer.alloc(0);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      const data = rest.length > 0 ? Buffer.concat([rest, buf.subarray(0, n)]) : buf.subarray(0, n);
      const cut = data.lastIndexOf(10);
      if (cut < 0) {
        rest = Buffer.from(data);
        continue;
      }
      const lines = data.toString('utf8', 0, cut).split('\n');
      rest = Buffer.from(data.subarray(cut + 1));
      for (const line of lines) if (line !== '') yield JSON.parse(line) as T;
    }
    if (rest.length > 0) yield JSON.parse(rest.toString('utf8')) as T;
  } finally {
    closeSync(fd);
  }
}
