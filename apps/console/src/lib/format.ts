/**
 * Number and time formatting for the console's locale. Every value keeps its
 * unit next to it; units are the SI/IEC symbols in both languages.
 */
export interface Format {
  num(n: number, maxDigits?: number): string;
  int(n: number): string;
  /** Events per second. */
  rate(n: number): string;
  ms(n: number): string;
  /** A 0..1 ratio as a percentage. */
  ratio(r: number): string;
  /** A value already in percent (CPU). */
  percent(p: number): string;
  bytes(n: number): string;
  /** Wall-clock time of day, 24 h. */
  time(at: number | Date): string;
  dateTime(at: number | Date): string;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function makeFormat(locale: string): Format {
  const cache = new Map<number, Intl.NumberFormat>();
  const nf = (digits: number) => {
    let f = cache.get(digits);
    if (!f) cache.set(digits, (f = new Intl.NumberFormat(locale, { maximumFractionDigits: digits })));
    return f;
  };
  const time = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
  const dateTime = new Intl.DateTimeFormat(locale, {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  });
  const num = (n: number, maxDigits = 1) => nf(maxDigits).format(n);
  const small = (n: number) => (Math.abs(n) < 10 ? 2 : 1);
  return {
    num,
    int: (n) => nf(0).format(n),
    rate: (n) => `${num(n, small(n))}/s`,
    ms: (n) => `${num(n, small(n))} ms`,
    ratio: (r) => `${num(r * 100, 1)}%`,
    percent: (p) => `${num(p, 1)}%`,
    bytes: (n) => {
      let v = n;
      let u = 0;
      while (Math.abs(v) >= 1024 && u < UNITS.length - 1) {
        v /= 1024;
        u++;
      }
      return `${num(v, u === 0 ? 0 : 1)} ${UNITS[u]}`;
    },
    time: (at) => time.format(at),
    dateTime: (at) => dateTime.format(at),
  };
}
