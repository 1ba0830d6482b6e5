import { keepPreviousData, useQueries, useQuery, type UseQueryResult } from '@tanstack/react-query';
import { useEffect, useMemo } from 'react';
import { Healthz, openSchema, Readyz, TopSnapshot, type ConsoleNode, type TopView } from '@parley/shared';
import type { HostResult } from '../../host/contract.ts';
import { pollInterval, useControls } from '../app/controls.ts';
import { learnNodeName } from '../app/node-names.ts';
import { seriesStore } from '../app/series.ts';
import { snapshotMetrics } from '../lib/series-store.ts';
import { usePlatform } from '../platform/context.tsx';
import { OpsFailure, readReply } from './ops.ts';

/** The snapshot as the console reads it: the shared schema, tolerant of fields a newer node adds. */
export const TopReading = openSchema(TopSnapshot);

/** A host result's value, or the failure it carries as an `OpsFailure`. */
export function unwrap<T>(r: HostResult<T>): T {
  if (r.ok) return r.value;
  const kind = r.error.code === 'session_expired' ? 'session_expired' : r.error.code === 'unreachable' ? 'unreachable' : 'refused';
  throw new OpsFailure(kind, r.error.error);
}

/** Every configured node (the host's allowlist). */
export function useNodeList(): UseQueryResult<ConsoleNode[]> {
  const { host } = usePlatform();
  return useQuery({ queryKey: ['nodes'], queryFn: async () => unwrap(await host.nodes.list()).nodes, staleTime: Infinity, retry: false });
}

/** The nodes of the selected context (all nodes when none is selected, or it names none that exist). */
export function useVisibleNodes(): { nodes: ConsoleNode[]; query: UseQueryResult<ConsoleNode[]> } {
  const query = useNodeList();
  const { context, contexts } = useControls();
  const nodes = useMemo(() => {
    const all = query.data ?? [];
    const ctx = contexts.find((c) => c.name === context);
    if (!ctx) return all;
    const picked = all.filter((n) => ctx.nodeIds.includes(n.id));
    return picked.length > 0 ? picked : all;
  }, [query.data, context, contexts]);
  return { nodes, query };
}

/** Polling options shared by every live query (console.md §2.3). */
function polling(intervalMs: number | false) {
  return {
    refetchInterval: intervalMs,
    refetchIntervalInBackground: false,
    staleTime: intervalMs === false ? Infinity : intervalMs,
    // The next tick is the retry: a failure shows at once, so a dead node is
    // marked unreachable within one or two intervals, not after back-off.
    retry: false,
    placeholderData: keepPreviousData,
  } as const;
}

/**
 * One top query per node (`view`, the page window, limit 100). Each success
 * also feeds the chart history.
 */
export function useTopQueries(nodes: readonly ConsoleNode[], view: TopView, everyMs?: number) {
  const { host } = usePlatform();
  const controls = useControls();
  const interval = pollInterval(controls);
  const every = interval === false ? false : Math.max(interval, everyMs ?? 0);
  const results = useQueries({
    queries: nodes.map((node) => ({
      queryKey: ['top', node.id, view, controls.window],
      queryFn: async () =>
        readReply(
          'top',
          await host.ops.get({ node: node.id, path: '/top/v1/snapshot', query: { view, window: controls.window, limit: '100' } }),
          TopReading,
        ),
      ...polling(every),
    })),
  });
  const stamps = results.map((r) => r.dataUpdatedAt).join(',');
  useEffect(() => {
    if (controls.paused) return;
    results.forEach((r, i) => {
      const node = nodes[i];
      if (!node || !r.data || r.isPlaceholderData) return;
      learnNodeName(node.id, r.data.node.name);
      seriesStore.push(node.id, Date.parse(r.data.generated_at) / 1000, snapshotMetrics(r.data));
    });
    // Keyed on the update stamps: only a new sample matters, and the results
    // array itself is new on every render.
  }, [stamps, controls.paused]);
  return results;
}

/** `/readyz` of each node, every 5 s (or the refresh interval when slower). */
export function useReadyQueries(nodes: readonly ConsoleNode[]) {
  const { host } = usePlatform();
  const controls = useControls();
  const interval = pollInterval(controls);
  return useQueries({
    queries: nodes.map((node) => ({
      queryKey: ['ready', node.id],
      queryFn: async () => readReply('readyz', await host.ops.get({ node: node.id, path: '/readyz' }), Readyz),
      ...polling(interval === false ? false : Math.max(interval, 5000)),
    })),
  });
}

/** `/healthz` of one node, every 10 s (or the refresh interval when slower). */
export function useHealth(node: ConsoleNode | undefined) {
  const { host } = usePlatform();
  const controls = useControls();
  const interval = pollInterval(controls);
  return useQuery({
    queryKey: ['health', node?.id],
    enabled: node !== undefined,
    queryFn: async () => readReply('healthz', await host.ops.get({ node: node!.id, path: '/healthz' }), Healthz),
    ...polling(interval === false ? false : Math.max(interval, 10000)),
  });
}
