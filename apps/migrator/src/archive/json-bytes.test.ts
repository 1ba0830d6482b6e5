import { describe, expect, it } from 'vitest';
import { putAscii, putNumber, putString, stringBound, type ByteOut } from './json-bytes.ts';

/** A ByteOut that grows by small steps, so writes cross its reserve calls. */
function out(): ByteOut & { text(): string } {
  return {
    buf: Buffer.alloc(4),
    used: 0,
    reserve(n) {
      if (n <= this.buf.length - this.used) return;
      const next = Buffer.alloc(this.used + n);
      this.buf.copy(next, 0, 0, this.used);
      this.buf = next;
    },
    text() {
      return this.buf.toString('utf8', 0, this.used);
    },
  };
}

describe('JSON into bytes', () => {
  it('writes numbers as JSON.stringify does', () => {
    const numbers = [0, -0, 1, 9, 10, 99, 100, 2 ** 31 - 1, -(2 ** 31 - 1), 2 ** 31, -(2 ** 31), 4294967295, 2 ** 53 - 1, -5, 1772436387, 1.5, 1e21, NaN, Infinity];
    for (const n of numbers) {
      const o = out();
      putNumber(o, n);
      expect(o.text()).toBe(JSON.stringify(n));
    }
  });

  it('writes strings as JSON.stringify does, in UTF-8, within their bound', () => {
    const strings = ['', 'plain', 'quote " inside', 'back\\slash', 'tab\tnew\nline\r', '\u0000\u001f\u007f', 'é 群 😀', 'lone \ud800 high', 'lone \udc00 low', '\u2028\u2029', '</script>', 'x'.repeat(100)];
    for (const s of strings) {
      const o = out();
      o.reserve(stringBound(s));
      const room = o.buf.length;
      putString(o, s);
      expect(o.text()).toBe(JSON.stringify(s));
      expect(o.buf.length).toBe(room); // the bound was enough: no growth
      const a = out();
      putAscii(a, s.replace(/[^\x20-\x7e]|["\\]/g, '_'));
      expect(a.text()).toBe(s.replace(/[^\x20-\x7e]|["\\]/g, '_'));
    }
  });
});
