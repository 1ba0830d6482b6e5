/**
 * JSON written straight into a byte buffer, exactly as `JSON.stringify`
 * would encode it in UTF-8, without building strings first: record lines
 * are most of what prepare writes. A line writer asks for room once (an upper
 * bound of the line's bytes), then writes each field at a cursor it keeps in
 * a local variable: `u = putString(b, u, s)`.
 */

/** Where JSON is encoded: a buffer, how much of it is used, and a way to make room. */
export interface ByteOut {
  buf: Buffer;
  used: number;
  /** Makes room for `n` more bytes at `used` (flushing, or moving to a larger buffer). */
  reserve(n: number): void;
}

/** Room a number takes at most (`JSON.stringify` of any double is at most 24 characters). */
export const NUMBER_BOUND = 24;

/** An upper bound of the UTF-8 bytes of `JSON.stringify(s)` (6 bytes a code unit at most, as `\u001f`). */
export function stringBound(s: string): number {
  return s.length * 6 + 2;
}

/** Writes `s`, known to be ASCII that JSON leaves as it is (keys, punctuation, Base64), at `u`; returns the end. */
export function putAscii(b: Buffer, u: number, s: string): number {
  const n = s.length;
  if (n > 32) return u + b.write(s, u, 'latin1');
  for (let i = 0; i < n; i++) b[u++] = s.charCodeAt(i);
  return u;
}

/** Writes a number as `JSON.stringify` does at `u`; returns the end. */
export function putNumber(b: Buffer, u: number, n: number): number {
  if (!(n >= -0x7fffffff && n <= 0x7fffffff && n === Math.trunc(n))) return u + b.write(JSON.stringify(n), u, 'latin1');
  if (n < 0) {
    b[u++] = 45;
    n = -n;
  }
  let end = u + 1;
  for (let t = n; t >= 10; t = (t / 10) | 0) end++;
  const stop = end;
  for (let t = n; ;) {
    const q = (t / 10) | 0;
    b[--end] = 48 + t - q * 10;
    if (q === 0) break;
    t = q;
  }
  return stop;
}

/** Writes `JSON.stringify(s)` in UTF-8 at `u`; returns the end. Printable ASCII is copied, anything else goes through `JSON.stringify`. */
export function putString(b: Buffer, u: number, s: string): number {
  const start = u;
  const n = s.length;
  b[u++] = 34;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c >= 0x80 || c === 34 || c === 92) {
      // escapes, non-ASCII (UTF-8) and lone surrogates (escaped): JSON.stringify's own text
      return start + b.write(JSON.stringify(s), start);
    }
    b[u++] = c;
  }
  b[u++] = 34;
  return u;
}
