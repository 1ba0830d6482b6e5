import type { TopSnapshot } from '@parley/shared';
import { Ring } from './ring.ts';

/** One chart point: time in seconds since the epoch (the snapshot's `generated_at`), value in the metric's unit. */
export interface Point {
  t: number;
  v: number;
}

/** Overview trend metrics, in chart order; each value's unit is in `METRIC_UNITS`. */
export const TREND_METRICS = ['send', 'sendack', 'deliver', 'append_p99', 'connections', 'cpu', 'rss'] as const;
export type TrendMetric = (typeof TREND_METRICS)[number];
export const METRIC_UNITS: Record<TrendMetric, 'rate' | 'ms' | 'count' | 'percent' | 'bytes'> = {
  send: 'rate',
  sendack: 'rate',
  deliver: 'rate',
  append_p99: 'ms',
  connections: 'count',
  cpu: 'percent',
  rss: 'bytes',
};

/** Prefix of pressure score series, one per component (`score:storage`). */
export const SCORE_PREFIX = 'score:';

/** The chartable values a snapshot carries (sections missing from its view are skipped). */
export function snapshotMetrics(s: TopSnapshot): Record<string, number> {
  const m: Record<string, number> = { cpu: s.resources.cpu_percent, rss: s.resources.memory_rss_bytes };
  if (s.traffic) {
    m.send = s.traffic.send_per_sec;
    m.sendack = s.traffic.sendack_per_sec;
    m.deliver = s.traffic.deliver_per_sec;
    m.append_p99 = s.traffic.append_p99_ms;
  }
  if (s.clients) m.connections = s.clients.connections;
  for (const [component, score] of Object.entries(s.pressure?.component_scores ?? {})) m[SCORE_PREFIX + component] = score;
  return m;
}

/**
 * Client-side history for charts: a ring per node and metric, fed by each
 * successful snapshot. Read by components through `useSyncExternalStore`
 * (subscribe + version), so pushing does not re-render through React state.
 */
export class SeriesStore {
  private readonly rings = new Map<string, Map<string, Ring<Point>>>();
  private readonly listeners = new Set<() => void>();
  private version = 0;
  /** When the oldest kept point was taken (seconds), for "collecting since". */
  private since: number | undefined;

  constructor(private capacity: number) {}

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = (): number => this.version;

  /** Adds a sample of `node` at `t` seconds; samples not newer than the metric's last are ignored. */
  push(node: string, t: number, values: Record<string, number>): void {
    let byMetric = this.rings.get(node);
    if (!byMetric) this.rings.set(node, (byMetric = new Map()));
    let changed = false;
    for (const [metric, v] of Object.entries(values)) {
      if (!Number.isFinite(v)) continue;
      let ring = byMetric.get(metric);
      if (!ring) byMetric.set(metric, (ring = new Ring(this.capacity)));
      const last = ring.last();
      if (last && last.t >= t) continue;
      ring.push({ t, v });
      changed = true;
    }
    if (!changed) return;
    if (this.since === undefined || t < this.since) this.since = t;
    this.bump();
  }

  series(node: string, metric: string): Point[] {
    return this.rings.get(node)?.get(metric)?.toArray() ?? [];
  }

  /** Metrics kept for `node` that start with `prefix`. */
  metrics(node: string, prefix = ''): string[] {
    return [...(this.rings.get(node)?.keys() ?? [])].filter((m) => m.startsWith(prefix));
  }

  collectingSince(): number | undefined {
    return this.since;
  }

  /** Points each ring keeps: range ÷ refresh interval. */
  setCapacity(capacity: number): void {
    if (capacity === this.capacity) return;
    this.capacity = capacity;
    for (const byMetric of this.rings.values()) for (const ring of byMetric.values()) ring.resize(capacity);
    this.bump();
  }

  clear(): void {
    this.rings.clear();
    this.since = undefined;
    this.bump();
  }

  private bump(): void {
    this.version++;
    for (const l of this.listeners) l();
  }
}

/**
 * uPlot data for several lines: one shared, sorted time axis (the union of
 * every line's timestamps within `[from, ∞)`), and each line's value at those
 * times or null where it has no sample.
 */
export function alignSeries(lines: readonly Point[][], from = -Infinity): [number[], ...(number | null)[][]] {
  const times = [...new Set(lines.flatMap((l) => l.filter((p) => p.t >= from).map((p) => p.t)))].sort((a, b) => a - b);
  const index = new Map(times.map((t, i) => [t, i]));
  const ys = lines.map((l) => {
    const y: (number | null)[] = new Array<number | null>(times.length).fill(null);
    for (const p of l) {
      const i = index.get(p.t);
      if (i !== undefined) y[i] = p.v;
    }
    return y;
  });
  return [times, ...ys];
}

/** Ring capacity for a chart range and refresh interval (a paused or "off" refresh sizes for 2 s). */
export function ringCapacity(rangeSec: number, refreshMs: number): number {
  const step = refreshMs > 0 ? refreshMs / 1000 : 2;
  return Math.max(2, Math.ceil(rangeSec / step) + 1);
}
