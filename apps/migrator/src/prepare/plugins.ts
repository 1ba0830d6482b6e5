import { Buffer } from 'node:buffer';
import type { ArtifactRecord } from '@parley/shared';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { Plan } from '@parley/shared';
import { readJsonl } from '../archive/jsonl.ts';
import { recordPath } from '../stages/records-dir.ts';
import type { ArchivedRecord } from '../v2/records.ts';

/** A plugin registered on one v2 node (node-local Plugin rows, spec v2-storage §3.19); its config (which may hold secrets) is not reported. */
export interface PluginSummary {
  no: string;
  name: string;
  version: string;
  status: number;
}

/** A plugin program the plan names (`plugin_artifacts[]`), checked and archived. */
export type { ArtifactRecord };

/** The report's `plugins` section: Parley runs no v2 plugins; what the plan maps is archived and reported. */
export interface PluginReport {
  hosted: false;
  note: string;
  by_node: Array<{ node_id: number; plugins: PluginSummary[] }>;
  plugin_nodes: Array<{ target_node_id: number; source_node_id: number; plugins: string[] }>;
  plugin_configs: Array<{ plugin_no: string; source_node_id: number }>;
  artifacts: ArtifactRecord[];
}

/** SHA-256 of a file, hex. */
export function fileSha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/**
 * Reads the plugin rows the scan archived and applies the plan's plugin
 * members: `plugin_configs[]` must name a plugin its source node has;
 * `plugin_artifacts[]` must name a file of exactly that size and SHA-256 (and
 * the profile's own digest, when it binds one). Returns the report section
 * and the problems (the run stops on any).
 */
export function pluginReport(plan: Plan, records: string): { report: PluginReport; problems: string[] } {
  const problems: string[] = [];
  const rows = new Map<string, Map<string, Map<string, Buffer>>>();
  for (const a of readJsonl<ArchivedRecord>(recordPath(records, 'archived'))) {
    if (a.kind !== 'plugin') continue;
    const key = Buffer.from(a.key, 'base64');
    if (key.length !== 14) continue;
    const id = key.subarray(4, 12).toString('hex');
    let byNode = rows.get(String(a.node_id));
    if (!byNode) rows.set(String(a.node_id), (byNode = new Map()));
    let cols = byNode.get(id);
    if (!cols) byNode.set(id, (cols = new Map()));
    cols.set(key.subarray(12, 14).toString('hex'), Buffer.from(a.value, 'base64'));
  }
  const by_node = plan.sources.map((s) => ({
    node_id: s.node_id,
    plugins: [...(rows.get(String(s.node_id))?.values() ?? [])]
      .map((c) => ({
        no: c.get('1501')?.toString('utf8') ?? '',
        name: c.get('1502')?.toString('utf8') ?? '',
        version: c.get('1507')?.toString('utf8') ?? '',
        status: c.get('1506')?.length === 4 ? c.get('1506')!.readUInt32BE(0) : 0,
      }))
      .sort((a, b) => (a.no < b.no ? -1 : a.no > b.no ? 1 : 0)),
  }));
  const plugins = (node: number) => by_node.find((n) => n.node_id === node)?.plugins.map((p) => p.no) ?? [];
  for (const [i, c] of (plan.plugin_configs ?? []).entries()) {
    if (!plugins(c.source_node_id).includes(c.plugin_no))
      problems.push(`plan.plugin_configs[${i}]: binds to nothing: source node ${c.source_node_id} has no plugin "${c.plugin_no}"`);
  }
  const artifacts: ArtifactRecord[] = [];
  for (const [i, a] of (plan.plugin_artifacts ?? []).entries()) {
    const at = `plan.plugin_artifacts[${i}]`;
    let size: number;
    try {
      const st = statSync(a.path);
      if (!st.isFile()) {
        problems.push(`${at}.path: ${a.path} is not a file`);
        continue;
      }
      size = st.size;
    } catch {
      problems.push(`${at}.path: ${a.path} does not exist`);
      continue;
    }
    if (size !== a.size) {
      problems.push(`${at}.size: the file has ${size} bytes`);
      continue;
    }
    const digest = fileSha256(a.path);
    if (digest !== a.sha256) {
      problems.push(`${at}.sha256: the file's SHA-256 is ${digest}`);
      continue;
    }
    if (a.profile_sha256 !== undefined && a.profile_sha256 !== digest)
      problems.push(`${at}.profile_sha256: the profile "${a.profile}" binds another program digest`);
    const name = a.path
      .split('/')
      .at(-1)!
      .replace(/[^A-Za-z0-9._-]/g, '_');
    artifacts.push({
      node_id: a.node_id,
      path: a.path,
      size,
      sha256: digest,
      profile: a.profile,
      archived_as: `plugins/node-${a.node_id}/${i}-${name}`,
    });
  }
  const report: PluginReport = {
    hosted: false,
    note: 'Parley runs no v2 plugins: plugin rows, plugin-user bindings and the named programs are archived and reported, not installed on the targets',
    by_node,
    plugin_nodes: (plan.plugin_nodes ?? []).map((p) => ({
      target_node_id: p.target_node_id,
      source_node_id: p.source_node_id,
      plugins: plugins(p.source_node_id),
    })),
    plugin_configs: (plan.plugin_configs ?? []).map((c) => ({ plugin_no: c.plugin_no, source_node_id: c.source_node_id })),
    artifacts,
  };
  return { report, problems };
}
