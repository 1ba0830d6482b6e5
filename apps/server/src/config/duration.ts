const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses a Go-style duration (`500ms`, `10s`, `3m`, `1h30m`) into
 * milliseconds. Returns undefined for anything else.
 */
export function parseDuration(text: string): number | undefined {
  if (text.length === 0 || text.length > 32) return undefined;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let end = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    end = re.lastIndex;
  }
  return end === text.length && end > 0 ? Math.round(total) : undefined;
}
