import { pressureBand, verdictRank, type TopPressureItem } from '@parley/shared';
import { nodeLabel, pressureLabel, type NodeView } from '../overview/view-model.ts';

export interface PressureRow {
  key: string;
  nodeId: string;
  nodeName: string;
  label: string;
  item: TopPressureItem;
  /** The score's band; the bars are coloured by it. */
  band: string;
  /** depth / capacity, 0..1 (undefined when the item has no queue). */
  depthFraction?: number;
  /** inflight / workers, 0..1 (undefined when the item has no workers). */
  inflightFraction?: number;
}

/**
 * How full a limit is, 0..1: `value/limit`, a limit of 0 with a value is
 * full (the server scores it 1 too), nothing to show without either.
 */
export function limitFraction(value: number | undefined, limit: number | undefined): number | undefined {
  if (value === undefined && limit === undefined) return undefined;
  const v = value ?? 0;
  const l = limit ?? 0;
  if (l <= 0) return v > 0 ? 1 : 0;
  return Math.min(1, Math.max(0, v / l));
}

export type PressureSort = 'score' | 'node' | 'component';

/** Every pressure item of every node, optionally only those at busy or worse, sorted. */
export function pressureRows(views: readonly NodeView[], opts: { onlyPressured: boolean; sort: PressureSort }): PressureRow[] {
  const rows: PressureRow[] = [];
  for (const v of views) {
    const nodeName = nodeLabel(v);
    for (const item of v.top?.pressure?.top ?? []) {
      const band = pressureBand(item.score);
      if (opts.onlyPressured && verdictRank(band) === 0 && verdictRank(item.level) === 0) continue;
      const label = pressureLabel(item);
      const row: PressureRow = {
        key: `${v.node.id}|${label}|${item.queue ?? ''}|${item.priority ?? ''}`,
        nodeId: v.node.id,
        nodeName,
        label,
        item,
        band,
      };
      const d = limitFraction(item.depth, item.capacity);
      if (d !== undefined) row.depthFraction = d;
      if (item.workers !== undefined || item.inflight !== undefined) row.inflightFraction = limitFraction(item.inflight, item.workers)!;
      rows.push(row);
    }
  }
  const byScore = (a: PressureRow, b: PressureRow) => b.item.score - a.item.score;
  if (opts.sort === 'score') return rows.sort(byScore);
  if (opts.sort === 'node') return rows.sort((a, b) => a.nodeName.localeCompare(b.nodeName) || byScore(a, b));
  return rows.sort((a, b) => a.label.localeCompare(b.label) || byScore(a, b));
}

export interface ComponentScore {
  component: string;
  score: number;
  band: string;
  /** The node holding the worst score. */
  nodeName: string;
}

/** Each component's worst score across nodes, worst first. */
export function componentScores(views: readonly NodeView[]): ComponentScore[] {
  const worst = new Map<string, ComponentScore>();
  for (const v of views) {
    for (const [component, score] of Object.entries(v.top?.pressure?.component_scores ?? {})) {
      const had = worst.get(component);
      if (!had || score > had.score) worst.set(component, { component, score, band: pressureBand(score), nodeName: nodeLabel(v) });
    }
  }
  return [...worst.values()].sort((a, b) => b.score - a.score || a.component.localeCompare(b.component));
}
