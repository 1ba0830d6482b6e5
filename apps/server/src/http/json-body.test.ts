import { describe, expect, it } from 'vitest';
import { parseJsonBody } from './json-body.ts';

describe('parseJsonBody', () => {
  it('keeps 64-bit integers exact as strings and leaves safe numbers alone', () => {
    expect(parseJsonBody('{"message_ids":[2124331629039063041, 12],"n":-9007199254740,"f":1.5e300,"message_id":9007199254740993}')).toEqual(
      {
        message_ids: ['2124331629039063041', 12],
        n: -9007199254740,
        f: 1.5e300,
        message_id: '9007199254740993',
      },
    );
  });
  it('does not touch digits inside strings, even after escaped quotes', () => {
    expect(parseJsonBody('{"a":"x\\"9007199254740993","message_id":9007199254740993}')).toEqual({
      a: 'x"9007199254740993',
      message_id: '9007199254740993',
    });
  });
  it('refuses an integer beyond 2^53 anywhere a 64-bit id is not accepted, so it never passes as a string', () => {
    expect(() => parseJsonBody('{"uid":12345678901234567890}')).toThrow(/uid: an integer beyond 2\^53/);
    expect(() => parseJsonBody('{"subscribers":[12345678901234567890]}')).toThrow(SyntaxError);
  });
  it('refuses nesting deeper than 64 levels before parsing, whatever brackets strings hold', () => {
    expect(() => parseJsonBody('['.repeat(50_000) + ']'.repeat(50_000))).toThrow(/nested deeper than 64/);
    expect(parseJsonBody(`{"a":"${'['.repeat(1000)}\\"${'{'.repeat(100)}"}`)).toEqual({ a: `${'['.repeat(1000)}"${'{'.repeat(100)}` });
    expect(parseJsonBody('['.repeat(64) + ']'.repeat(64))).toBeInstanceOf(Array);
  });
  it('still rejects invalid JSON', () => {
    expect(() => parseJsonBody('{"a":12345678901234567')).toThrow(SyntaxError);
  });
});
