import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';

/** Digest, line count and size of one written record file. */
export interface FileDigest {
  sha256: string;
  count: number;
  bytes: number;
}

/** Bytes buffered before a write (records are small; payloads up to a few hundred KiB). */
const CHUNK = 1 << 20;

/**
 * A JSON Lines file written in one stream: one record per line, hashed as it
 * is written. Created owner-only (0600) and exclusive: it never overwrites.
 */
export class JsonlWriter {
  private readonly fd: number;
  private readonly hash = createHash('sha256');
  private parts: string[] = [];
  private pending = 0;
  private count = 0;
  private bytes = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'wx', 0o600);
  }

  write(record: object): void {
    const line = `${JSON.stringify(record)}\n`;
    this.parts.push(line);
    this.pending += line.length;
    this.count++;
    if (this.pending >= CHUNK) this.flush();
  }

  private flush(): void {
    if (this.parts.length === 0) return;
    const buf = Buffer.from(this.parts.join(''), 'utf8');
    this.parts = [];
    this.pending = 0;
    this.hash.update(buf);
    this.bytes += buf.length;
    let off = 0;
    while (off < buf.length) off += writeSync(this.fd, buf, off);
  }

  /** Flushes, fsyncs and closes; returns the file's digest. */
  close(): FileDigest {
    this.flush();
    fsyncSync(this.fd);
    closeSync(this.fd);
    return { sha256: this.hash.digest('hex'), count: this.count, bytes: this.bytes };
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

/** The read buffer of `digestFile` and `sha256File`, allocated on first use (both are synchronous). */
let readBuffer: Buffer | undefined;

/** Streams a file through `chunk`; returns its size. */
function streamFile(path: string, chunk: (data: Buffer) => void): number {
  readBuffer ??= Buffer.allocUnsafe(CHUNK);
  const buf = readBuffer;
  const fd = openSync(path, 'r');
  let bytes = 0;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunk(n === buf.length ? buf : buf.subarray(0, n));
      bytes += n;
    }
  } finally {
    closeSync(fd);
  }
  return bytes;
}

/** SHA-256, line count and size of a file, streamed. */
export function digestFile(path: string): FileDigest {
  const hash = createHash('sha256');
  let count = 0;
  const bytes = streamFile(path, (data) => {
    hash.update(data);
    for (let i = data.indexOf(10); i >= 0; i = data.indexOf(10, i + 1)) count++;
  });
  return { sha256: hash.digest('hex'), count, bytes };
}

/** SHA-256 of a file, streamed (no line count: for binary files). */
export function sha256File(path: string): string {
  const hash = createHash('sha256');
  streamFile(path, (data) => hash.update(data));
  return hash.digest('hex');
}
