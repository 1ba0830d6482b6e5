/**
 * JSON written straight into a byte buffer, exactly as `JSON.stringify`
 * would encode it in UTF-8, without building strings first: record lines
 * are most of what prepare writes.
 */

/** Where JSON is encoded: a buffer, how much of it is used, and a way to make room. */
export interface ByteOut {
  buf: Buffer;
  used: number;
  /** Makes room for `n` more bytes at `used` (flushing, or moving to a larger buffer). */
  reserve(n: number): void;
}

/** Appends `s`, known to be ASCII that JSON leaves as it is (keys, punctuation, Base64). */
export function putAscii(o: ByteOut, s: string): void {
  const n = s.length;
  o.reserve(n);
  if (n > 32) {
    o.used += o.buf.write(s, o.used, 'latin1');
    return;
  }
  const b = o.buf;
  let u = o.used;
  for (let i = 0; i < n; i++) b[u++] = s.charCodeAt(i);
  o.used = u;
}

/** Appends a number as `JSON.stringify` writes it. */
export function putNumber(o: ByteOut, n: number): void {
  o.reserve(24);
  const b = o.buf;
  let u = o.used;
  if (!(n >= -0x7fffffff && n <= 0x7fffffff && n === Math.trunc(n))) {
    o.used = u + b.write(JSON.stringify(n), u, 'latin1');
    return;
  }
  if (n < 0) {
    b[u++] = 45;
    n = -n;
  }
  let end = u + 1;
  for (let t = n; t >= 10; t = (t / 10) | 0) end++;
  o.used = end;
  for (let t = n; ; ) {
    const q = (t / 10) | 0;
    b[--end] = 48 + t - q * 10;
    if (q === 0) break;
    t = q;
  }
}

/** Appends `JSON.stringify(s)` in UTF-8: printable ASCII is copied, anything else goes through `JSON.stringify`. */
export function putString(o: ByteOut, s: string): void {
  const n = s.length;
  o.reserve(n * 6 + 2);
  const b = o.buf;
  const start = o.used;
  let u = start;
  b[u++] = 34;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c >= 0x80 || c === 34 || c === 92) {
      // escapes, non-ASCII (UTF-8) and lone surrogates (escaped): JSON.stringify's own text, at most 6 bytes a code unit
      o.used = start + b.write(JSON.stringify(s), start);
      return;
    }
    b[u++] = c;
  }
  b[u++] = 34;
  o.used = u;
}

/** An upper bound of the UTF-8 bytes of `JSON.stringify(s)`. */
export function stringBound(s: string): number {
  return s.length * 6 + 2;
}
