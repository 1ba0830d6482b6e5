import type { TopView } from '@parley/shared';
import { pollInterval, useControls } from '../app/controls.ts';
import { useNow } from '../app/use-now.ts';
import type { NodeView } from '../features/overview/view-model.ts';
import { nodeStatus } from './node-status.ts';
import { useReadyQueries, useTopQueries, useVisibleNodes } from './queries.ts';

/**
 * The nodes of the current context with their latest top snapshot (`view`),
 * `/readyz` and statuses, re-evaluated every second so staleness shows even
 * when no request completes.
 */
export function useNodeViews(view: TopView, opts: { everyMs?: number; only?: string } = {}) {
  const { everyMs } = opts;
  const visible = useVisibleNodes();
  const query = visible.query;
  const nodes = opts.only === undefined ? visible.nodes : (query.data ?? []).filter((n) => n.id === opts.only);
  const tops = useTopQueries(nodes, view, everyMs);
  const readies = useReadyQueries(nodes);
  const controls = useControls();
  const now = useNow(1000);
  const interval = pollInterval(controls);
  const topInterval = interval === false ? 0 : Math.max(interval, everyMs ?? 0);
  const views: NodeView[] = nodes.map((node, i) => {
    const top = tops[i]!;
    const ready = readies[i]!;
    const v: NodeView = {
      node,
      status: nodeStatus(top, now, topInterval),
      readyStatus: nodeStatus(ready, now, interval === false ? 0 : Math.max(interval, 5000)),
    };
    if (top.data) v.top = top.data;
    if (ready.data) v.ready = ready.data;
    return v;
  });
  return { views, nodes, nodesQuery: query, now, tops };
}
