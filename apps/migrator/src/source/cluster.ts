import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openPebble } from '@parley/pebble';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { fnv1a64Hex, hex8, u64Num } from '../v2/hash.ts';

/** One slot of `remote.json` (zero fields are absent there: slot 0 has no `id`). */
export interface SlotConfig {
  id: number;
  leader: number;
  term: number;
  replicas: number[];
  learners: number[];
}

/** The cluster topology: `remote.json` of the node with the highest `version` (spec v2-storage §5.3). */
export interface Topology {
  version: number;
  /** Nodes whose file has that version. */
  from_nodes: number[];
  /** Per source node, the version of its own file. */
  versions: Record<string, number>;
  /** Every node of the cluster (replicas and proxies). */
  nodes: number[];
  slot_count: number;
  slots: SlotConfig[];
}

const REMOTE_JSON = join('cluster', 'config', 'remote.json');

/** A Go integer as read here: a number, or the decimal text of one too large for a JS number. */
const GoInt = Type.Union([Type.Number(), Type.String({ pattern: '^-?[0-9]+$' })]);
const GoIntList = Type.Array(GoInt);

/**
 * The parts of `remote.json` read here (Go `encoding/json` of `types.Config`;
 * zero fields are absent, other fields are left alone).
 */
const RemoteJson = Type.Object({
  version: Type.Optional(GoInt),
  slotCount: Type.Optional(GoInt),
  nodes: Type.Optional(Type.Array(Type.Object({ id: Type.Optional(GoInt) }))),
  slots: Type.Optional(
    Type.Array(
      Type.Object({
        id: Type.Optional(GoInt),
        leader: Type.Optional(GoInt),
        term: Type.Optional(GoInt),
        replicas: Type.Optional(GoIntList),
        learners: Type.Optional(GoIntList),
      }),
    ),
  ),
});
type RemoteJson = Static<typeof RemoteJson>;

/**
 * `remote.json` text with every integer of 16 digits or more quoted, so u64
 * values survive `JSON.parse`, checked against the parts read here.
 */
function parseBigSafe(text: string): RemoteJson {
  const value: unknown = JSON.parse(text.replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,}\]])/g, '$1"$2"'));
  if (Value.Check(RemoteJson, value)) return value;
  const e = [...Value.Errors(RemoteJson, value)][0];
  throw new Error(`not a cluster configuration: ${e?.path || '/'} ${e?.message}`);
}

/**
 * Reads the cluster topology from the sources' `remote.json` files. Returns
 * undefined when no source has one (single-node data directories). The
 * plan must name every node of the cluster: a subset would migrate one
 * replica's view without the others (a lagging or stale copy).
 */
export function readTopology(sources: ReadonlyArray<{ node_id: number; data_dir: string }>): { topology?: Topology; problems: string[] } {
  const problems: string[] = [];
  const files = sources.map((s) => ({ s, file: join(s.data_dir, REMOTE_JSON) })).filter(({ file }) => existsSync(file));
  if (files.length === 0) {
    if (sources.length > 1)
      problems.push(
        `plan.sources: ${sources.length} source nodes but none has ${REMOTE_JSON}: without the cluster topology no replica can be chosen`,
      );
    return { problems };
  }
  const versions: Record<string, number> = {};
  let best: { version: number; json: RemoteJson } | undefined;
  const from: number[] = [];
  for (const { s, file } of files) {
    let json: RemoteJson;
    try {
      json = parseBigSafe(readFileSync(file, 'utf8'));
    } catch (err) {
      problems.push(`source node ${s.node_id}: ${file}: ${(err as Error).message}`);
      continue;
    }
    const version = Number(json.version ?? 0);
    versions[String(s.node_id)] = version;
    if (!best || version > best.version) {
      best = { version, json };
      from.length = 0;
    }
    if (version === best.version) from.push(s.node_id);
  }
  if (!best) return { problems };
  const j = best.json;
  const nodes = (j.nodes ?? []).map((n) => Number(n.id ?? 0)).sort((a, b) => a - b);
  const topology: Topology = {
    version: best.version,
    from_nodes: from.sort((a, b) => a - b),
    versions,
    nodes,
    slot_count: Number(j.slotCount ?? 64),
    slots: (j.slots ?? []).map((x) => ({
      id: Number(x.id ?? 0),
      leader: Number(x.leader ?? 0),
      term: Number(x.term ?? 0),
      replicas: (x.replicas ?? []).map(Number),
      learners: (x.learners ?? []).map(Number),
    })),
  };
  const named = new Set(sources.map((s) => s.node_id));
  const missing = nodes.filter((n) => !named.has(n));
  if (missing.length > 0) {
    problems.push(
      `plan.sources: the cluster (remote.json version ${best.version}) has nodes [${nodes.join(', ')}] but the plan names [${[...named].sort((a, b) => a - b).join(', ')}]: every node must be named (missing ${missing.join(', ')}); one node's copy may be stale or lagging`,
    );
  }
  for (const s of sources)
    if (!nodes.includes(s.node_id))
      problems.push(
        `plan.sources: node ${s.node_id} is not a node of the cluster (remote.json version ${best.version} lists [${nodes.join(', ')}])`,
      );
  return { topology, problems };
}

/** A slot's log on one node: last log index and applied index. */
export interface SlotLogState {
  last_index: number;
  applied_index: number;
}

/**
 * Reads the slot Raft log DBs of a node (`cluster/logdb/shardNNN`, read
 * only): per slot its last log index and applied index (spec v2-storage §5.2).
 */
export function readSlotLogs(dataDir: string, slotCount: number): Map<number, SlotLogState> {
  const bySlotHash = new Map<string, number>();
  for (let slot = 0; slot < slotCount; slot++) bySlotHash.set(fnv1a64Hex(String(slot)), slot);
  const out = new Map<number, SlotLogState>();
  const at = (slot: number) => {
    let s = out.get(slot);
    if (!s) out.set(slot, (s = { last_index: 0, applied_index: 0 }));
    return s;
  };
  const root = join(dataDir, 'cluster', 'logdb');
  if (!existsSync(root)) return out;
  for (const name of readdirSync(root)
    .filter((n) => /^shard\d{3}$/.test(n))
    .sort()) {
    const db = openPebble(join(root, name));
    try {
      for (const e of db.iterate({ start: Uint8Array.of(1, 1, 0, 0), end: Uint8Array.of(1, 1, 0, 1) })) {
        const slot = e.key.length === 20 ? bySlotHash.get(hex8(e.key, 4)) : undefined;
        if (slot !== undefined) at(slot).last_index = Math.max(at(slot).last_index, u64Num(e.key, 12));
      }
      for (const e of db.iterate({ start: Uint8Array.of(2, 2, 0, 0), end: Uint8Array.of(2, 2, 0, 1) })) {
        const slot = e.key.length === 12 ? bySlotHash.get(hex8(e.key, 4)) : undefined;
        if (slot !== undefined && e.value.length >= 8) at(slot).applied_index = u64Num(e.value, 0);
      }
    } finally {
      db.close();
    }
  }
  return out;
}
