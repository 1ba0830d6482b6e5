import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { SlotLogState, Topology } from '../source/cluster.ts';
import { slotOf } from '../v2/hash.ts';

/**
 * Which replica counts, for a several-node source (seed 001: "decide
 * authoritative replicas; compare formal replicas; never pick the longest
 * follower on conflict"; spec v2-storage §4.2, §5.5):
 * - slot-scoped rows: the formal replicas of the slot (`remote.json` of the
 *   highest version) with the highest applied index;
 * - a channel's replica set: the channel cluster config (0B) copy with the
 *   highest ConfVersion among the formal replicas of its slot;
 * - its committed log: the longest prefix that a quorum (len(Replicas)/2+1)
 *   of those replicas hold identically (message id and term at every seq);
 *   replicas holding all of it are authoritative, shorter equal ones lag,
 *   rows on nodes outside Replicas never count.
 */

/** The decoded channel cluster config columns of one node's 0B row. */
export interface ConfigCopy {
  node: number;
  conf_version: number;
  replicas: number[];
  learners: number[];
  leader_id: number;
  term: number;
  migrate_from: number;
  migrate_to: number;
}

const u64 = (v: Uint8Array | undefined, at = 0) =>
  v && v.length >= at + 8 ? Number(Buffer.from(v.buffer, v.byteOffset, v.byteLength).readBigUInt64BE(at)) : 0;
const ids = (v: Uint8Array | undefined) => Array.from({ length: Math.floor((v?.length ?? 0) / 8) }, (_, i) => u64(v, i * 8));

/** Decodes a 0B row's columns (spec v2-storage §3.11). */
export function decodeConfig(node: number, cols: Map<number, Uint8Array>): ConfigCopy {
  const term = cols.get(0x0b07);
  return {
    node,
    conf_version: u64(cols.get(0x0b0b)),
    replicas: ids(cols.get(0x0b04)),
    learners: ids(cols.get(0x0b05)),
    leader_id: u64(cols.get(0x0b06)),
    term: term && term.length >= 4 ? Buffer.from(term.buffer, term.byteOffset, 4).readUInt32BE(0) : 0,
    migrate_from: u64(cols.get(0x0b08)),
    migrate_to: u64(cols.get(0x0b09)),
  };
}

export interface SlotVerdict {
  slot: number;
  replicas: number[];
  leader: number;
  per_node: Record<string, SlotLogState>;
  authoritative_nodes: number[];
  lagging_nodes: number[];
  /** The node slot-scoped rows are taken from: the leader if authoritative, else the lowest authoritative node. */
  source_node: number;
  /** Some node's applied index is below its last log index (log application not drained). */
  undrained: number[];
}

/** Per slot: formal replicas, their log positions, and which are authoritative. */
export function slotVerdicts(topology: Topology, logs: Map<number, Map<number, SlotLogState>>): Map<number, SlotVerdict> {
  const out = new Map<number, SlotVerdict>();
  for (const s of topology.slots) {
    const formal = s.replicas.filter((n) => logs.has(n));
    const per_node: Record<string, SlotLogState> = {};
    for (const n of formal) per_node[String(n)] = logs.get(n)!.get(s.id) ?? { last_index: 0, applied_index: 0 };
    const best = Math.max(...formal.map((n) => per_node[String(n)]!.applied_index));
    const authoritative = formal.filter((n) => per_node[String(n)]!.applied_index === best).sort((a, b) => a - b);
    const lagging = formal.filter((n) => !authoritative.includes(n)).sort((a, b) => a - b);
    const undrained = formal.filter((n) => per_node[String(n)]!.applied_index < per_node[String(n)]!.last_index);
    out.set(s.id, {
      slot: s.id,
      replicas: s.replicas,
      leader: s.leader,
      per_node,
      authoritative_nodes: authoritative,
      lagging_nodes: lagging,
      source_node: authoritative.includes(s.leader) ? s.leader : (authoritative[0] ?? formal[0] ?? 0),
      undrained,
    });
  }
  return out;
}

/** What one node holds of a channel: its tail (last-seq key), its log entries and its 0B copy. */
export interface ChannelHolding {
  node: number;
  last_seq: number;
  /** `<message id>:<term>` at index seq - 1, up to `last_seq`. */
  log: string[];
  config?: ConfigCopy;
}

export interface ChannelVerdict {
  channel_id: string;
  channel_type: number;
  slot: number;
  formal_slot_replicas: number[];
  authoritative_config?: Omit<ConfigCopy, 'node'>;
  authoritative_config_held_by: number[];
  stale_config_copies_on: number[];
  quorum: number;
  per_node_last_seq: Record<string, number>;
  committed_last_seq: number;
  committed_last_message_id: string;
  committed_last_term: string;
  /** SHA-256 over `<seq>:<message id>:<term>\n` of the committed log. */
  committed_log_sha256: string;
  authoritative_replicas: number[];
  lagging_replicas: Array<{ node: number; last_seq: number; missing_seqs: string }>;
  conflicting_replicas: number[];
  uncommitted_tails: Array<{ node: number; seqs: string }>;
  non_replica_copies: Array<{ node: number; last_seq: number }>;
  /** The node whose rows the target takes (the leader if authoritative, else the lowest authoritative replica); 0 for none. */
  source_node: number;
  /** Why no replica could be chosen, if so. */
  problem?: string;
}

const range = (a: number, b: number) => (a === b ? `${a}` : `${a}..${b}`);

/** Decides a channel's replica set, committed log and source node from what every node holds. */
export function channelVerdict(channelId: string, channelType: number, topology: Topology, holdings: ChannelHolding[]): ChannelVerdict {
  const slot = slotOf(channelId, topology.slot_count);
  const formal = topology.slots.find((s) => s.id === slot)?.replicas ?? [];
  const copies = holdings.filter((h) => h.config && formal.includes(h.node)).map((h) => h.config!);
  const best = copies.reduce<ConfigCopy | undefined>((a, c) => (!a || c.conf_version > a.conf_version ? c : a), undefined);
  const v: ChannelVerdict = {
    channel_id: channelId,
    channel_type: channelType,
    slot,
    formal_slot_replicas: formal,
    authoritative_config_held_by: [],
    stale_config_copies_on: [],
    quorum: 0,
    per_node_last_seq: {},
    committed_last_seq: 0,
    committed_last_message_id: '',
    committed_last_term: '',
    committed_log_sha256: '',
    authoritative_replicas: [],
    lagging_replicas: [],
    conflicting_replicas: [],
    uncommitted_tails: [],
    non_replica_copies: [],
    source_node: 0,
  };
  for (const h of holdings) v.per_node_last_seq[String(h.node)] = h.last_seq;
  if (!best) {
    v.problem = `no formal replica of slot ${slot} holds a channel cluster config (0B) for it: its replica set is unknown`;
    return v;
  }
  const { node: _n, ...config } = best;
  v.authoritative_config = config;
  v.authoritative_config_held_by = copies
    .filter((c) => c.conf_version === best.conf_version)
    .map((c) => c.node)
    .sort((a, b) => a - b);
  v.stale_config_copies_on = copies
    .filter((c) => c.conf_version < best.conf_version)
    .map((c) => c.node)
    .sort((a, b) => a - b);
  const replicas = best.replicas;
  v.quorum = Math.floor(replicas.length / 2) + 1;
  const logOf = new Map(holdings.map((h) => [h.node, h.log.slice(0, h.last_seq)]));
  for (const h of holdings)
    if (!replicas.includes(h.node) && h.last_seq > 0) v.non_replica_copies.push({ node: h.node, last_seq: h.last_seq });
  // partition refinement: the replicas agreeing on every entry so far, seq by seq
  let groups: number[][] = [replicas.filter((r) => logOf.has(r))];
  let committed = 0;
  let committedGroup: number[] = groups[0] ?? [];
  for (let seq = 1; groups.some((g) => g.length >= v.quorum); seq++) {
    const next = new Map<string, number[]>();
    for (const g of groups) {
      for (const r of g) {
        const e = logOf.get(r)![seq - 1];
        if (e === undefined) continue;
        const k = `${groups.indexOf(g)}|${e}`;
        next.set(k, [...(next.get(k) ?? []), r]);
      }
    }
    groups = [...next.values()];
    const q = groups.find((g) => g.length >= v.quorum);
    if (!q) break;
    committed = seq;
    committedGroup = q;
  }
  const log = committedGroup.length > 0 ? logOf.get(committedGroup[0]!)!.slice(0, committed) : [];
  v.committed_last_seq = committed;
  const last = log.at(-1)?.split(':');
  v.committed_last_message_id = last?.[0] ?? '';
  v.committed_last_term = last?.[1] ?? '';
  v.committed_log_sha256 = createHash('sha256')
    .update(log.map((e, i) => `${i + 1}:${e}\n`).join(''))
    .digest('hex');
  for (const r of [...replicas].sort((a, b) => a - b)) {
    const own = logOf.get(r);
    if (!own) continue;
    const agrees = own.slice(0, committed).every((e, i) => e === log[i]);
    if (agrees && own.length >= committed) v.authoritative_replicas.push(r);
    else if (agrees) v.lagging_replicas.push({ node: r, last_seq: own.length, missing_seqs: range(own.length + 1, committed) });
    else v.conflicting_replicas.push(r);
    if (own.length > committed && agrees) v.uncommitted_tails.push({ node: r, seqs: range(committed + 1, own.length) });
  }
  if (v.authoritative_replicas.length === 0 && committed > 0) v.problem = 'no replica holds the committed log';
  v.source_node = v.authoritative_replicas.includes(best.leader_id) ? best.leader_id : (v.authoritative_replicas[0] ?? 0);
  return v;
}
