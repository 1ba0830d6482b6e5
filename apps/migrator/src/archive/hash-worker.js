// A hashing thread (see hasher.ts). Plain JavaScript with Node built-ins only, so it starts in tens of
// milliseconds: no TypeScript to compile. In: { id, files: string[], lines: boolean }.
// Out: { id, digests: [{ sha256, bytes, count }] } (count: newlines, when asked) or { id, error }.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

const buffer = Buffer.allocUnsafe(1 << 20);

function digest(path, lines) {
  const hash = createHash('sha256');
  let bytes = 0;
  let count = 0;
  const fd = openSync(path, 'r');
  try {
    for (let n = readSync(fd, buffer, 0, buffer.length, null); n > 0; n = readSync(fd, buffer, 0, buffer.length, null)) {
      const chunk = n === buffer.length ? buffer : buffer.subarray(0, n);
      hash.update(chunk);
      bytes += n;
      if (lines) for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) count++;
    }
  } finally {
    closeSync(fd);
  }
  return { sha256: hash.digest('hex'), bytes, count };
}

parentPort.on('message', ({ id, files, lines }) => {
  try {
    parentPort.postMessage({ id, digests: files.map((f) => digest(f, lines)) });
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
