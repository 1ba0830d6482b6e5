/**
 * A tiny log writer for tests: produces legacy or recyclable chunks exactly as
 * the format describes (32 KiB blocks, zero-filled block tails, masked CRC32C).
 */
import { maskedCrc32c } from '../src/index.ts';

const BLOCK = 32768;

/** Encodes `records` as a log file. `logNum` is written into recyclable chunk headers. */
export function writeLog(records: Uint8Array[], opts: { recyclable: boolean; logNum?: number; eofTrailer?: boolean }): Uint8Array {
  const header = opts.recyclable ? 11 : 7;
  const out: number[] = [];
  const chunk = (type: number, payload: Uint8Array, logNum = opts.logNum ?? 0): void => {
    const left = BLOCK - (out.length % BLOCK);
    if (left < header) for (let i = 0; i < left; i++) out.push(0);
    const body = [type + (opts.recyclable ? 4 : 0)];
    if (opts.recyclable) body.push(logNum & 0xff, (logNum >>> 8) & 0xff, (logNum >>> 16) & 0xff, logNum >>> 24);
    body.push(...payload);
    const crc = maskedCrc32c(new Uint8Array(body));
    out.push(crc & 0xff, (crc >>> 8) & 0xff, (crc >>> 16) & 0xff, crc >>> 24, payload.length & 0xff, payload.length >>> 8, ...body);
  };
  for (const rec of records) {
    let pos = 0;
    let first = true;
    do {
      let left = BLOCK - (out.length % BLOCK);
      if (left < header) {
        for (let i = 0; i < left; i++) out.push(0);
        left = BLOCK;
      }
      const n = Math.min(rec.length - pos, left - header);
      const last = pos + n === rec.length;
      chunk(first && last ? 1 : first ? 2 : last ? 4 : 3, rec.subarray(pos, pos + n));
      pos += n;
      first = false;
    } while (pos < rec.length);
  }
  if (opts.eofTrailer) {
    const n = (opts.logNum ?? 0) + 1;
    const left = BLOCK - (out.length % BLOCK);
    if (left < 11) for (let i = 0; i < left; i++) out.push(0);
    out.push(0, 0, 0, 0, 0, 0, 5, n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24);
  }
  return new Uint8Array(out);
}

/** A record of `n` bytes with a recognisable pattern. */
export function pattern(n: number, seed: number): Uint8Array {
  const r = new Uint8Array(n);
  for (let i = 0; i < n; i++) r[i] = (i * 31 + seed) & 0xff;
  return r;
}
