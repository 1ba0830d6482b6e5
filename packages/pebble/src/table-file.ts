/**
 * Positional, read-only access to one file through a descriptor (opened with
 * flag 'r': no writes, no locks). Reads allocate a fresh buffer so that views
 * handed out to callers stay valid after the next read.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { PebbleCorruptionError } from './errors.ts';

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

  /** Reads exactly `length` bytes at `offset`; fewer available is a corruption error. */
  read(offset: number, length: number): Uint8Array {
    if (this.fd === undefined) throw new Error(`${this.path} is closed`);
    if (offset < 0 || length < 0 || offset + length > this.size) {
      throw new PebbleCorruptionError(this.path, offset, `read of ${length} bytes runs past the end of the file (size ${this.size})`);
    }
    const b = Buffer.allocUnsafeSlow(length);
    const buf = new Uint8Array(b.buffer, b.byteOffset, length);
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
