import { describe, expect, it } from 'vitest';
import { NUMBER_BOUND, putAscii, putNumber, putString, stringBound } from './json-bytes.ts';

/** Writes with `put` into a buffer exactly `bound` bytes long (a bound too small loses bytes, and the text then differs). */
function written(bound: number, put: (b: Buffer, u: number) => number): string {
  const b = Buffer.alloc(bound);
  const end = put(b, 0);
  expect(end).toBeLessThanOrEqual(bound);
  return b.toString('utf8', 0, end);
}

describe('JSON into bytes', () => {
  it('writes numbers as JSON.stringify does, within NUMBER_BOUND', () => {
    const numbers = [
      0,
      -0,
      1,
      9,
      10,
      99,
      100,
      2 ** 31 - 1,
      -(2 ** 31 - 1),
      2 ** 31,
      -(2 ** 31),
      4294967295,
      2 ** 53 - 1,
      -5,
      1772436387,
      1.5,
      1e21,
      -1.7976931348623157e308,
      5e-324,
      NaN,
      Infinity,
    ];
    for (const n of numbers) expect(written(NUMBER_BOUND, (b, u) => putNumber(b, u, n))).toBe(JSON.stringify(n));
  });

  it('writes strings as JSON.stringify does, in UTF-8, within their bound', () => {
    const strings = [
      '',
      'plain',
      'quote " inside',
      'back\\slash',
      'tab\tnew\nline\r',
      '\u0000\u001f\u007f',
      'é 群 😀',
      'lone \ud800 high',
      'lone \udc00 low',
      '\u2028\u2029',
      '</script>',
      '\u0001'.repeat(40),
      'x'.repeat(100),
    ];
    for (const s of strings) {
      expect(written(stringBound(s), (b, u) => putString(b, u, s))).toBe(JSON.stringify(s));
      const ascii = s.replace(/[^\x20-\x7e]|["\\]/g, '_');
      expect(written(ascii.length, (b, u) => putAscii(b, u, ascii))).toBe(ascii);
    }
  });
});
