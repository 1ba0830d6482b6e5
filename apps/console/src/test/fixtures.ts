import type { ConsoleNode, TopAlert, TopPressureItem, TopSnapshot } from '@parley/shared';
import type { NodeStatus } from '../api/node-status.ts';
import type { NodeView } from '../features/overview/view-model.ts';

/** A valid overview snapshot of node `name` (the shape a Parley node sends), with overrides. */
export function snapshot(
  name: string,
  o: {
    level?: string;
    ready?: boolean;
    reasons?: string[];
    summary?: string;
    items?: TopPressureItem[];
    active?: TopAlert[];
    recent?: TopAlert[];
    at?: string;
    send?: number;
  } = {},
): TopSnapshot {
  const items = o.items ?? [];
  const scores: Record<string, number> = {};
  for (const it of items) scores[it.component] = Math.max(scores[it.component] ?? 0, it.score);
  return {
    version: 'top/v1',
    scope: 'local_node',
    generated_at: o.at ?? '2026-01-01T00:00:10Z',
    window_seconds: 10,
    node: { id: 1, name, ready: o.ready ?? true, ready_parts: { routes: o.ready ?? true, slots: true, channels: true } },
    verdict: { level: o.level ?? 'ok', summary: o.summary ?? 'runtime healthy', ...(o.reasons ? { reasons: o.reasons } : {}) },
    resources: { cpu_percent: 12.5, memory_rss_bytes: 150 * 1024 * 1024, memory_vms_bytes: 0, goroutines: 10, threads: 4 },
    alerts: {
      counts: { active: o.active?.length ?? 0, recent: o.recent?.length ?? 0, warning: 0, error: 0, critical: 0 },
      ...(o.active ? { active: o.active } : {}),
      ...(o.recent ? { recent: o.recent } : {}),
    },
    sources: {
      collector: { available: true, sample_count: 11 },
      cluster_snapshot: { available: false },
      metrics: { enabled: true, required: false },
    },
    traffic: {
      send_per_sec: o.send ?? 5,
      sendack_per_sec: o.send ?? 5,
      sendack_error_per_sec: 0,
      sendack_error_rate: 0,
      append_per_sec: 5,
      append_p50_ms: 1,
      append_p99_ms: 4,
      deliver_per_sec: 5,
      fanout_rate: 1,
    },
    clients: { connections: 3, connections_by_protocol: { jsonrpc: 3, wkproto: 0 }, auth_fail_per_sec: 0, close_per_sec: 0 },
    pressure: { overall_level: o.level ?? 'ok', component_scores: scores, top: items },
  };
}

export function item(component: string, pool: string, score: number, level: string, extra: Partial<TopPressureItem> = {}): TopPressureItem {
  return { component, pool, queue: `${pool}_queue`, level, score, ...extra };
}

export function alert(id: string, o: Partial<TopAlert> = {}): TopAlert {
  return {
    id,
    fingerprint: `c|k|${id}`,
    severity: 'warn',
    component: 'c',
    kind: 'pressure_high',
    message: `${id} pressure`,
    first_seen: '2026-01-01T00:00:00Z',
    last_seen: '2026-01-01T00:00:05Z',
    count: 1,
    active: true,
    ...o,
  };
}

export const OK: NodeStatus = { kind: 'ok', stale: false, ageMs: 500 };

export function node(id: string): ConsoleNode {
  return { id, url: `http://127.0.0.1/${id}`, has_token: false };
}

export function view(id: string, top: TopSnapshot | undefined, status: NodeStatus = OK): NodeView {
  return top ? { node: node(id), status, top } : { node: node(id), status };
}
