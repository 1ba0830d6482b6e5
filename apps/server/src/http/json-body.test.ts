import { describe, expect, it } from 'vitest';
import { parseJsonBody } from './json-body.ts';

describe('parseJsonBody', () => {
  it('keeps 64-bit integers exact as strings and leaves safe numbers alone', () => {
    expect(parseJsonBody('{"message_ids":[2124331629039063041, 12],"n":-9007199254740993,"f":1.5e300}')).toEqual({
      message_ids: ['2124331629039063041', 12],
      n: '-9007199254740993',
      f: 1.5e300,
    });
  });
  it('does not touch digits inside strings, even after escaped quotes', () => {
    expect(parseJsonBody('{"a":"x\\"9007199254740993","b":9007199254740993}')).toEqual({ a: 'x"9007199254740993', b: '9007199254740993' });
  });
  it('still rejects invalid JSON', () => {
    expect(() => parseJsonBody('{"a":12345678901234567')).toThrow(SyntaxError);
  });
});
