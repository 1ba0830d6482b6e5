const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses a Go `time.ParseDuration` string (`1h30m`, `2.5s`, `-3ms`, `0`) into
 * milliseconds; undefined when Go would reject it.
 */
export function parseGoDuration(text: string): number | undefined {
  if (text.length === 0 || text.length > 64) return undefined;
  let rest = text;
  let sign = 1;
  if (rest[0] === '-' || rest[0] === '+') {
    sign = rest[0] === '-' ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  const re = /(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  while (pos < rest.length) {
    re.lastIndex = pos;
    const m = re.exec(rest);
    if (!m) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    pos = re.lastIndex;
  }
  return sign * total;
}
