import { Buffer } from 'node:buffer';
import { CMD_SUFFIX } from '@parley/shared';
import type { JsonlWriter } from '../archive/jsonl.ts';
import type { SlotLogState, Topology } from '../source/cluster.ts';
import { recordPath } from '../stages/records-dir.ts';
import { channelHash } from '../v2/hash.ts';
import type { ExcludedRecord, MessageRecord, RecordFile } from '../v2/records.ts';
import { channelVerdict, decodeConfig, slotVerdicts, type ChannelHolding, type ChannelVerdict, type SlotVerdict } from './authority.ts';
import type { Collector } from './collector.ts';
import type { Finding } from './findings.ts';
import { readLines } from './read-lines.ts';
import { completeDictionary } from './resolve.ts';
import { selectSlotRows, type RowDifference } from './slot-rows.ts';

/** One source node's scan: its collector and the directory its message, archived and excluded lines went to. */
export interface NodeScan {
  node_id: number;
  collector: Collector;
  records: string;
  writers?: Record<RecordFile, JsonlWriter>;
}

/** The report's account of the replica choice (seed 001: "decide authoritative replicas"). */
export interface AuthorityReport {
  topology: { remote_json_version: number; from_nodes: number[]; versions: Record<string, number>; nodes: number[]; slot_count: number };
  slots_in_sync: number;
  slots_diverging: SlotVerdict[];
  channels: ChannelVerdict[];
  slot_scoped_row_differences: RowDifference[];
}

/**
 * Merges the scans of several source nodes into one set of records in
 * `merged` (a collector of no node of its own) and `out`: per channel the
 * committed log of its source replica (`channelVerdict`), per slot the rows
 * of its source replica (`slotVerdicts`, `selectSlotRows`); every node's
 * archived rows (node-local plugin rows, queues, raw configs) are kept.
 * Findings about a channel are kept from the node the channel is taken from.
 */
export function mergeNodes(
  topology: Topology,
  slotLogs: Map<number, Map<number, SlotLogState>>,
  scans: NodeScan[],
  merged: Collector,
  out: { messages: JsonlWriter; archived: JsonlWriter; excluded: JsonlWriter },
  conversationReplicas: ReadonlyArray<{ logical_key: string; copies_sha256: string; source_node_id: number; archive_only?: boolean }>,
): { report: AuthorityReport; problems: string[] } {
  const slots = slotVerdicts(topology, slotLogs);
  for (const s of scans) for (const [ch, p] of s.collector.dictionary) if (!merged.dictionary.has(ch)) merged.learn(p.id, p.type, {});
  completeDictionary(
    merged,
    scans.map((s) => s.collector),
  );

  // channels: every hash a node holds a tail or a config of
  const channels = new Set<string>();
  for (const s of scans) for (const ch of [...s.collector.tails.keys(), ...s.collector.configs.keys()]) channels.add(ch);
  const chosen = new Map<string, ChannelVerdict>();
  const verdicts: ChannelVerdict[] = [];
  for (const ch of channels) {
    const named = merged.dictionary.get(ch) ?? configName(scans, ch);
    if (!named) {
      const held = scans.find((s) => (s.collector.tails.get(ch)?.last_seq ?? 0) > 0);
      if (held)
        merged.findings.block({
          code: 'unresolved_channel_tail',
          detail: `last-seq under channel hash ${ch} that no known channel has`,
          node_id: held.node_id,
        });
      continue;
    }
    const holdings: ChannelHolding[] = [];
    for (const s of scans) {
      const tail = s.collector.tails.get(ch);
      const cols = s.collector.configs.get(ch);
      if (!tail && !cols) continue;
      holdings.push({
        node: s.node_id,
        last_seq: tail?.last_seq ?? 0,
        log: s.collector.logs.get(ch) ?? [],
        config: cols ? decodeConfig(s.node_id, cols) : undefined,
      });
    }
    const v = channelVerdict(named.id, named.type, topology, holdings);
    verdicts.push(v);
    if (v.problem && holdings.some((h) => h.last_seq > 0)) {
      merged.findings.block({ code: 'channel_replica_unknown', detail: v.problem, channel_id: named.id, channel_type: named.type });
      continue;
    }
    chosen.set(ch, v);
    const src = scans.find((s) => s.node_id === v.source_node);
    const tail = src?.collector.tails.get(ch);
    if (tail)
      merged.tails.set(ch, {
        ...tail,
        last_seq: v.committed_last_seq,
        messages: 0,
        clipped: tail.clipped + Math.max(0, tail.last_seq - v.committed_last_seq),
      });
  }
  verdicts.sort((a, b) => a.channel_type - b.channel_type || (a.channel_id < b.channel_id ? -1 : a.channel_id > b.channel_id ? 1 : 0));
  const takes = (node: number, ch: string, seq: number) => {
    const v = chosen.get(ch);
    return v !== undefined && v.source_node === node && seq <= v.committed_last_seq;
  };

  for (const s of scans) {
    for (const line of readLines(recordPath(s.records, 'messages'))) {
      const m = JSON.parse(line) as MessageRecord;
      const ch = channelHash(m.v2_channel_id, m.channel_type);
      if (!takes(s.node_id, ch, m.message_seq)) continue;
      out.messages.writeLine(line);
      merged.retained++;
      merged.tails.get(ch)!.messages++;
      merged.registerId(s.node_id, m.shard, {
        message_id: m.message_id,
        ch,
        seq: m.message_seq,
        channel_id: m.v2_channel_id,
        channel_type: m.channel_type,
        timestamp: m.timestamp,
      });
    }
    for (const line of readLines(recordPath(s.records, 'excluded'))) {
      const e = JSON.parse(line) as ExcludedRecord;
      const r = e.record as unknown as MessageRecord;
      if (e.kind !== 'message' || !takes(s.node_id, channelHash(r.v2_channel_id, r.channel_type), r.message_seq)) continue;
      out.excluded.writeLine(line);
      merged.excludedCounts[e.reason] = (merged.excludedCounts[e.reason] ?? 0) + 1;
    }
    for (const line of readLines(recordPath(s.records, 'archived'))) out.archived.writeLine(line);
    for (const e of s.collector.duplicates)
      if (e.relation === 'client_msg_no' && takes(s.node_id, e.ch, e.newer)) merged.duplicates.push(e);
    for (const [ch, g] of s.collector.gapped) if (takes(s.node_id, ch, g.seq)) merged.gapped.set(ch, g);
    for (const [k, n] of Object.entries(s.collector.counts)) merged.counts[k] = (merged.counts[k] ?? 0) + n;
    const keep = (f: Finding) => {
      if (f.code === 'duplicate_message_id' && f.evidence?.clash) return false; // checked again over the merged rows
      if (f.channel_id === undefined || f.channel_type === undefined) return true;
      const v = chosen.get(channelHash(f.channel_id, f.channel_type));
      return v === undefined || v.source_node === s.node_id;
    };
    merged.findings.blockers.push(...s.collector.findings.blockers.filter(keep));
    for (const w of s.collector.findings.warnings.filter(keep)) merged.findings.warn(w);
  }

  const rows = selectSlotRows(topology, slots, scans, merged, conversationReplicas);
  const diverging = [...slots.values()].filter((v) => {
    const states = Object.values(v.per_node).map((p) => `${p.last_index}/${p.applied_index}`);
    return new Set(states).size > 1;
  });
  for (const v of slots.values()) {
    if (v.undrained.length > 0) {
      merged.findings.block({
        code: 'slot_log_not_applied',
        detail: `slot ${v.slot}: node(s) [${v.undrained.join(', ')}] have log entries not applied (log application did not drain before the stop)`,
      });
    }
  }
  return {
    report: {
      topology: {
        remote_json_version: topology.version,
        from_nodes: topology.from_nodes,
        versions: topology.versions,
        nodes: topology.nodes,
        slot_count: topology.slot_count,
      },
      slots_in_sync: slots.size - diverging.length,
      slots_diverging: diverging,
      channels: verdicts,
      slot_scoped_row_differences: rows.differences,
    },
    problems: rows.problems,
  };
}

/** A channel known only by its 0B rows: their ChannelId and ChannelType columns. */
function configName(scans: NodeScan[], ch: string): { id: string; type: number } | undefined {
  for (const s of scans) {
    const cols = s.collector.configs.get(ch);
    const id = cols?.get(0x0b01);
    if (id && id.length > 0) return { id: Buffer.from(id).toString('utf8'), type: cols!.get(0x0b02)?.[0] ?? 0 };
  }
  return undefined;
}

export const isCmd = (id: string) => id.endsWith(CMD_SUFFIX);
