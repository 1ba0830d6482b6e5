import { normaliseSeverity, sortAlerts } from '@parley/shared';
import { nodeLabel, type NodeAlert, type NodeView } from '../overview/view-model.ts';

/** An alert row: one per node and fingerprint. */
export interface AlertRow extends NodeAlert {
  /** Unique across nodes: `nodeId|fingerprint` (or the alert id when it has no fingerprint). */
  key: string;
  /** `warning`, `error`, `critical` (the server's `warn` normalised). */
  level: string;
}

export type AlertState = 'all' | 'active' | 'recent';

export interface AlertFilter {
  node: string;
  severity: string;
  component: string;
  state: AlertState;
}

export const NO_FILTER: AlertFilter = { node: '', severity: '', component: '', state: 'all' };

/**
 * Active and recent alerts of every node, deduplicated by fingerprint per
 * node (an alert that resolved and fired again shows once, its active copy
 * winning, else its latest).
 */
export function collectAlerts(views: readonly NodeView[]): AlertRow[] {
  const rows = new Map<string, AlertRow>();
  for (const v of views) {
    const name = nodeLabel(v);
    for (const a of [...(v.top?.alerts.active ?? []), ...(v.top?.alerts.recent ?? [])]) {
      const key = `${v.node.id}|${a.fingerprint ?? a.id}`;
      const row: AlertRow = { ...a, nodeId: v.node.id, nodeName: name, key, level: normaliseSeverity(a.severity) };
      const had = rows.get(key);
      if (!had || (row.active && !had.active) || (row.active === had.active && Date.parse(row.last_seen) > Date.parse(had.last_seen)))
        rows.set(key, row);
    }
  }
  return sortAlerts([...rows.values()]);
}

/** Rows matching the filter, in triage order (active, severity, last seen). */
export function filterAlerts(rows: readonly AlertRow[], f: AlertFilter): AlertRow[] {
  return rows.filter(
    (r) =>
      (!f.node || r.nodeId === f.node) &&
      (!f.severity || r.level === f.severity) &&
      (!f.component || r.component === f.component) &&
      (f.state === 'all' || (f.state === 'active') === r.active),
  );
}

/** The values each filter can take, from the rows at hand. */
export function alertFacets(rows: readonly AlertRow[]): {
  nodes: { id: string; name: string }[];
  severities: string[];
  components: string[];
} {
  const nodes = new Map<string, string>();
  for (const r of rows) nodes.set(r.nodeId, r.nodeName);
  return {
    nodes: [...nodes].map(([id, name]) => ({ id, name })),
    severities: [...new Set(rows.map((r) => r.level))],
    components: [...new Set(rows.map((r) => r.component))].sort(),
  };
}

/** Evidence as sorted key/value pairs. */
export function evidencePairs(row: Pick<AlertRow, 'evidence'>): [string, string][] {
  return Object.entries(row.evidence ?? {}).sort(([a], [b]) => a.localeCompare(b));
}
