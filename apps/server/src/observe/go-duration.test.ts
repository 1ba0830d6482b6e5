import { describe, expect, it } from 'vitest';
import { parseGoDuration } from './go-duration.ts';

describe('parseGoDuration', () => {
  it.each([
    ['10s', 10_000],
    ['1m30s', 90_000],
    ['1.5h', 5_400_000],
    ['2500ms', 2500],
    ['0', 0],
    ['-3s', -3000],
    ['1500us', 1.5],
    ['.5s', 500],
  ])('%s = %d ms', (text, ms) => expect(parseGoDuration(text)).toBeCloseTo(ms, 6));

  it.each(['', '10', 's', '1d', '1 s', '1s ', '--1s', '1.2.3s'])('rejects %j', (text) => expect(parseGoDuration(text)).toBeUndefined());
});
