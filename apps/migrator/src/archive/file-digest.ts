import { createHash, webcrypto } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';

/** Digest, line count and size of one written record file. */
export interface FileDigest {
  sha256: string;
  count: number;
  bytes: number;
}

/** Read size of the streamed digests. */
const CHUNK = 1 << 20;
/**
 * Files up to this size are read whole and hashed on the libuv thread pool,
 * several at once and off the main thread; larger ones are streamed here.
 */
const POOLED_MAX = 8 << 20;
/** Pooled digests in flight: bounds the memory they hold to POOLED_MAX each. */
const POOLED_AT_ONCE = 4;

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

/** The number of newlines in `data`. */
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

/** A file's digest with, for a file read whole (up to POOLED_MAX), the bytes it was taken over. */
export interface ReadDigest extends FileDigest {
  data?: Buffer;
}

/** `digestFile`, hashed on the thread pool when the file is small enough; `keep`: return its bytes too. */
async function digestPooled(path: string, lines: boolean, keep: boolean): Promise<ReadDigest> {
  if (statSync(path).size > POOLED_MAX) return digestFile(path, lines);
  const data = readFileSync(path);
  const count = lines ? countLines(data) : 0;
  const sha256 = Buffer.from(await webcrypto.subtle.digest('SHA-256', data)).toString('hex');
  return keep ? { sha256, count, bytes: data.length, data } : { sha256, count, bytes: data.length };
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results in item order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

/** `digestFile` of several files, hashed in parallel off the main thread. */
export function digestFiles(paths: readonly string[]): Promise<FileDigest[]> {
  return mapLimit(paths, POOLED_AT_ONCE, (p) => digestPooled(p, true, false));
}

/**
 * `digestFiles`, keeping the bytes of the files read whole: a caller that
 * writes exactly those bytes elsewhere writes what it checked.
 */
export function readAndDigestFiles(paths: readonly string[]): Promise<ReadDigest[]> {
  return mapLimit(paths, POOLED_AT_ONCE, (p) => digestPooled(p, true, true));
}

/** SHA-256 of several (binary) files, hashed in parallel off the main thread. */
export async function sha256Files(paths: readonly string[]): Promise<string[]> {
  return (await mapLimit(paths, POOLED_AT_ONCE, (p) => digestPooled(p, false, false))).map((d) => d.sha256);
}
