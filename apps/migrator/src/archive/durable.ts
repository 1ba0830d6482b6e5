import { Buffer } from 'node:buffer';
import { closeSync, fchmodSync, fsync, openSync, writeSync } from 'node:fs';
import { promisify } from 'node:util';

const fsyncAsync = promisify(fsync);

/**
 * Creates `file` owner-only (0600, whatever the umask), refusing to overwrite,
 * and writes `data`; returns the open descriptor, for `syncAndClose`.
 */
export function createFile(file: string, data: Uint8Array | string): number {
  const fd = openSync(file, 'wx', 0o600);
  try {
    fchmodSync(fd, 0o600);
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** Flushes files (or directories: their entries) to disk, all at once on the libuv thread pool, and closes them. */
export async function syncAndClose(fds: readonly number[]): Promise<void> {
  // every fsync settles before any descriptor is closed (a number closed early could be reused meanwhile)
  const results = await Promise.allSettled(fds.map((fd) => fsyncAsync(fd)));
  for (const fd of fds) closeSync(fd);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}
