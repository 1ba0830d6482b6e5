import { Buffer } from 'node:buffer';
import { closeSync, openSync, readSync } from 'node:fs';

/** The lines of a text file (UTF-8, `\n`-separated), streamed; empty lines skipped. */
export function* readLines(path: string): Generator<string> {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
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
      rest = Buffer.from(data.subarray(cut + 1));
      for (const line of data.toString('utf8', 0, cut).split('\n')) if (line !== '') yield line;
    }
    if (rest.length > 0) yield rest.toString('utf8');
  } finally {
    closeSync(fd);
  }
}
