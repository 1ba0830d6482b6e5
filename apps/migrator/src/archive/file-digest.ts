import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';

/** Digest, line count and size of one written record file. */
export interface FileDigest {
  sha256: string;
  count: number;
  bytes: number;
}

/** Read size of the streamed digests. */
const CHUNK = 1 << 20;
/** Files up to this size can be read whole by `readAndDigest`, which keeps their bytes; larger ones are streamed. */
const KEPT_MAX = 8 << 20;

/** The read buffer of the streamed digests, allocated on first use (they are synchronous). */
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

function countLines(data: Buffer): number {
  let count = 0;
  for (let i = data.indexOf(10); i >= 0; i = data.indexOf(10, i + 1)) count++;
  return count;
}

/** SHA-256, line count (unless `lines` is false: binary files) and size of a file, streamed. */
export function digestFile(path: string, lines = true): FileDigest {
  const hash = createHash('sha256');
  let count = 0;
  const bytes = streamFile(path, (data) => {
    hash.update(data);
    if (lines) count += countLines(data);
  });
  return { sha256: hash.digest('hex'), count, bytes };
}

/** A file's digest with, for a file read whole (up to KEPT_MAX), the bytes it was taken over. */
export interface ReadDigest extends FileDigest {
  data?: Buffer;
}

/**
 * `digestFile`, keeping the bytes of a file small enough to read whole: a
 * caller that writes exactly those bytes elsewhere writes what it checked.
 */
export function readAndDigest(path: string): ReadDigest {
  if (statSync(path).size > KEPT_MAX) return digestFile(path);
  const data = readFileSync(path);
  return { sha256: createHash('sha256').update(data).digest('hex'), count: countLines(data), bytes: data.length, data };
}

/** Whether a file holds exactly `data` (read back in chunks, compared byte for byte). */
export function fileEquals(path: string, data: Uint8Array): boolean {
  let at = 0;
  let same = true;
  const size = streamFile(path, (chunk) => {
    if (same && (at + chunk.length > data.length || Buffer.compare(chunk, data.subarray(at, at + chunk.length)) !== 0)) same = false;
    at += chunk.length;
  });
  return same && size === data.length;
}
