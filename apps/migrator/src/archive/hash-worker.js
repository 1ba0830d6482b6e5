// A hashing thread (see hasher.ts). Plain JavaScript with Node built-ins only, so it starts in tens of
// milliseconds: no TypeScript to compile. Message in: { id, files: string[] }; out: { id, sums } or { id, error }.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

const buffer = Buffer.allocUnsafe(1 << 20);

function sha256(path) {
  const hash = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    for (let n = readSync(fd, buffer, 0, buffer.length, null); n > 0; n = readSync(fd, buffer, 0, buffer.length, null)) {
      hash.update(n === buffer.length ? buffer : buffer.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

parentPort.on('message', ({ id, files }) => {
  try {
    parentPort.postMessage({ id, sums: files.map(sha256) });
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
