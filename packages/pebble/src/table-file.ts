/**
 * Positional, read-only access to one file through a descriptor (opened with
 * flag 'r': no writes, no locks). `read` allocates a fresh buffer, so views
 * handed out to callers stay valid after the next read; `readTransient` reuses
 * one shared buffer for bytes that are consumed at once.
 */
import { Buffer } from 'node:buffer';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { PebbleCorruptionError, PebbleError } from './errors.ts';

let transient = new Uint8Array(64 * 1024);

export class TableFile {
  private fd: number | undefined;
  /** File size in bytes. */
  readonly size: number;
  /** Bytes read so far (for throughput statistics). */
  bytesRead = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'r');
    this.size = fstatSync(this.fd).size;
  }

  /** Reads exactly `length` bytes at `offset` into a new buffer; fewer available is a corruption error. */
  read(offset: number, length: number): Uint8Array {
    const b = Buffer.allocUnsafeSlow(length);
    return this.readInto(new Uint8Array(b.buffer, b.byteOffset, length), offset, length);
  }

  /**
   * Reads like {@link read}, into memory shared by every file and reused by the
   * next call (for bytes consumed at once, such as a compressed block).
   */
  readTransient(offset: number, length: number): Uint8Array {
    if (transient.length < length) transient = new Uint8Array(Math.max(length, transient.length * 2));
    return this.readInto(transient.subarray(0, length), offset, length);
  }

  private readInto(buf: Uint8Array, offset: number, length: number): Uint8Array {
    if (this.fd === undefined) throw new PebbleError(`pebble: ${this.path} is closed (its database or table was closed)`);
    if (offset < 0 || length < 0 || offset + length > this.size) {
      throw new PebbleCorruptionError(this.path, offset, `read of ${length} bytes runs past the end of the file (size ${this.size})`);
    }
    let done = 0;
    while (done < length) {
      const n = readSync(this.fd, buf, done, length - done, offset + done);
      if (n === 0) throw new PebbleCorruptionError(this.path, offset + done, 'unexpected end of file');
      done += n;
    }
    this.bytesRead += length;
    return buf;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
