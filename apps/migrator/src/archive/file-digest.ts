import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

import type { FileDigest } from '@parley/shared';

export type { FileDigest };

/** Read size of the streamed digests. */
const CHUNK = 1 << 20;

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
