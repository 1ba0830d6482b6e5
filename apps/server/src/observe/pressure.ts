import type { TopPressure, TopPressureItem } from '@parley/shared';

/** One bounded queue (or worker pool) as read on a collector tick. */
export interface QueueGauge {
  component: string;
  pool: string;
  queue: string;
  priority?: string;
  depth?: number;
  capacity?: number;
  inflight?: number;
  workers?: number;
  waitP99Ms?: number;
  taskP99Ms?: number;
}

/** Level thresholds on the pressure score (http-api.md §5). */
export const PRESSURE_THRESHOLDS = { critical: 0.95, degraded: 0.8, busy: 0.6 } as const;

/** Levels from best to worst; verdicts use the same scale. */
export const LEVELS = ['ok', 'busy', 'degraded', 'critical'] as const;
export type Level = (typeof LEVELS)[number];

export const HINTS = {
  workers: 'inflight work is at worker capacity',
  noCapacity: 'queue has depth but no capacity',
  depth: 'queue depth is approaching capacity',
} as const;

export function levelRank(level: string): number {
  const i = LEVELS.indexOf(level as Level);
  return i < 0 ? 0 : i;
}

export function worse(a: Level, b: Level): Level {
  return levelRank(a) >= levelRank(b) ? a : b;
}

export function levelOf(score: number): Level {
  if (score >= PRESSURE_THRESHOLDS.critical) return 'critical';
  if (score >= PRESSURE_THRESHOLDS.degraded) return 'degraded';
  if (score >= PRESSURE_THRESHOLDS.busy) return 'busy';
  return 'ok';
}

/**
 * Score of one gauge: `depth/capacity` (capacity 0 with depth > 0 is 1) and
 * `inflight/workers`, whichever is higher, capped at 1.
 */
export function scoreOf(g: QueueGauge): { score: number; hint?: string } {
  const depth = g.depth ?? 0;
  let queueScore = 0;
  let queueHint: string | undefined;
  if (g.capacity !== undefined || g.depth !== undefined) {
    const cap = g.capacity ?? 0;
    if (cap <= 0) {
      queueScore = depth > 0 ? 1 : 0;
      queueHint = depth > 0 ? HINTS.noCapacity : undefined;
    } else {
      queueScore = depth / cap;
      queueHint = HINTS.depth;
    }
  }
  const workerScore = g.workers && g.workers > 0 ? (g.inflight ?? 0) / g.workers : 0;
  const score = Math.min(1, Math.max(queueScore, workerScore));
  const hint = score === 0 ? undefined : workerScore > queueScore ? HINTS.workers : queueHint;
  return hint ? { score, hint } : { score };
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

export function pressureItem(g: QueueGauge): TopPressureItem {
  const { score, hint } = scoreOf(g);
  const level = levelOf(score);
  const item: TopPressureItem = { component: g.component, pool: g.pool, queue: g.queue, level, score: round(score) };
  if (g.priority !== undefined) item.priority = g.priority;
  if (g.depth !== undefined) item.depth = g.depth;
  if (g.capacity !== undefined) item.capacity = g.capacity;
  if (g.inflight !== undefined) item.inflight = round(g.inflight);
  if (g.workers !== undefined) item.workers = g.workers;
  if (g.waitP99Ms !== undefined) item.wait_p99_ms = round(g.waitP99Ms);
  if (g.taskP99Ms !== undefined) item.task_p99_ms = round(g.taskP99Ms);
  if (hint && level !== 'ok') item.hint = hint;
  return item;
}

/** All items, worst first. */
export function pressureItems(gauges: readonly QueueGauge[]): TopPressureItem[] {
  return gauges.map(pressureItem).sort((a, b) => b.score - a.score);
}

/** The `pressure` section: overall level = worst item, scores per component, top items capped by `limit`. */
export function pressureSection(items: readonly TopPressureItem[], limit: number): TopPressure {
  let overall: Level = 'ok';
  const scores: Record<string, number> = {};
  for (const it of items) {
    overall = worse(overall, it.level as Level);
    scores[it.component] = Math.max(scores[it.component] ?? 0, it.score);
  }
  return { overall_level: overall, component_scores: scores, top: items.slice(0, limit) };
}
