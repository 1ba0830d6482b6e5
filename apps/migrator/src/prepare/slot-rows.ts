import { createHash } from 'node:crypto';
import type { Topology } from '../source/cluster.ts';
import { slotOf } from '../v2/hash.ts';
import type { SlotVerdict } from './authority.ts';
import type { Collector, Located } from './collector.ts';
import { logicalKey } from './conversations.ts';
import type { NodeScan } from './merge.ts';

/** A slot-scoped row whose copies differ between replicas (reported; blocking only among authoritative replicas). */
export interface RowDifference {
  kind: string;
  key: string;
  slot: number;
  values_by_node: Record<string, unknown>;
  authoritative_nodes: number[];
  reason: string;
}

type Kind = 'users' | 'devices' | 'channelInfos' | 'members' | 'conversations' | 'systemUids';
const KINDS: Kind[] = ['users', 'devices', 'channelInfos', 'members', 'conversations', 'systemUids'];
const NAMES: Record<Kind, string> = {
  users: 'user',
  devices: 'device',
  channelInfos: 'channel_info',
  members: 'member',
  conversations: 'conversation',
  systemUids: 'system_uid',
};

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
type AnyRow = Located<Record<string, unknown>>;

/** The identity of a row across replicas and the key v2 places it by (uid, or channel id without type). */
function identity(kind: Kind, r: AnyRow, merged: Collector): { id: string; slotKey?: string } {
  switch (kind) {
    case 'users':
      return { id: String(r.uid), slotKey: String(r.uid) };
    case 'devices':
      return { id: String(r.v2_device_id), slotKey: String(r.uid) };
    case 'conversations':
      return { id: `${String(r.uid)} ${String(r.channel_id)}/${String(r.channel_type)} type ${String(r.type)}`, slotKey: String(r.uid) };
    case 'systemUids':
      return { id: String(r.uid), slotKey: undefined };
    case 'channelInfos': {
      const name = String(r.channel_id) !== '' ? String(r.channel_id) : merged.dictionary.get(String(r.ch))?.id;
      return { id: String(r.ch), slotKey: name };
    }
    case 'members':
      return { id: `${String(r.list)} ${String(r.ch)} ${String(r.uid)}`, slotKey: merged.dictionary.get(String(r.ch))?.id };
  }
}

/**
 * Takes each slot-scoped row (users, devices, channel info, members and
 * lists, conversations, system uids) from its slot's source replica (the
 * leader if authoritative, else the lowest authoritative replica; system
 * uids live in slot 0). Copies that differ between authoritative replicas
 * block, except conversations, which `metadata.conversation_replicas[]`
 * resolves (`source_node_id`'s copy, or none with `archive_only`); copies on
 * lagging replicas that differ are reported only.
 */
export function selectSlotRows(
  topology: Topology,
  slots: Map<number, SlotVerdict>,
  scans: NodeScan[],
  merged: Collector,
  entries: ReadonlyArray<{ logical_key: string; copies_sha256: string; source_node_id: number; archive_only?: boolean }>,
): { differences: RowDifference[]; problems: string[] } {
  const differences: RowDifference[] = [];
  const problems: string[] = [];
  const byKey = new Map(entries.map((e, i) => [e.logical_key, { ...e, index: i, used: false }]));
  for (const kind of KINDS) {
    const table = new Map<string, { slot: number | undefined; copies: Map<number, AnyRow> }>();
    for (const s of scans) {
      for (const r of s.collector[kind] as unknown as AnyRow[]) {
        const { id, slotKey } = identity(kind, r, merged);
        let t = table.get(id);
        if (!t)
          table.set(
            id,
            (t = {
              slot: kind === 'systemUids' ? 0 : slotKey === undefined ? undefined : slotOf(slotKey, topology.slot_count),
              copies: new Map(),
            }),
          );
        t.copies.set(s.node_id, r);
      }
    }
    const out = merged[kind] as unknown as AnyRow[];
    for (const [id, t] of table) {
      const v = t.slot === undefined ? undefined : slots.get(t.slot);
      const value = (node: number) => {
        const r = t.copies.get(node);
        if (!r) return null;
        const { node_id: _n, shard: _s, ...rest } = r;
        return rest;
      };
      if (!v) {
        // no slot to judge by (a row whose channel no row names): the lowest node's copy, reported later
        out.push(t.copies.get(Math.min(...t.copies.keys()))!);
        continue;
      }
      const auth = v.authoritative_nodes;
      const distinct = new Set(auth.map((n) => JSON.stringify(value(n))));
      let take = v.source_node;
      if (distinct.size > 1) {
        const values_by_node = Object.fromEntries(
          v.replicas.filter((n) => t.copies.has(n) || auth.includes(n)).map((n) => [String(n), value(n)]),
        );
        if (kind !== 'conversations') {
          merged.findings.block({
            code: 'slot_rows_differ',
            detail: `${NAMES[kind]} ${id}: the authoritative replicas of slot ${v.slot} (same applied index) hold different copies`,
            evidence: { values_by_node },
          });
          continue;
        }
        const r = t.copies.get(v.source_node) ?? [...t.copies.values()][0]!;
        const lk = logicalKey(String(r.uid), Number(r.channel_type), String(r.channel_id));
        const copies = sha(
          [...t.copies.entries()]
            .map(([n]) => `${n}:${sha(JSON.stringify(value(n)))}`)
            .sort()
            .join('\n'),
        );
        const entry = byKey.get(lk);
        if (!entry) {
          merged.findings.block({
            code: 'conversation_replicas_differ',
            detail: `conversation ${id}: the authoritative replicas of slot ${v.slot} hold different copies`,
            uid: String(r.uid),
            evidence: { values_by_node, replica: { logical_key: lk, copies_sha256: copies, source_node_id: v.source_node } },
          });
          continue;
        }
        entry.used = true;
        if (entry.copies_sha256 !== copies) {
          problems.push(`plan.metadata.conversation_replicas[${entry.index}].copies_sha256: the copies hash to ${copies} (they changed)`);
          continue;
        }
        if (entry.archive_only === true || entry.source_node_id === 0) continue;
        if (!t.copies.has(entry.source_node_id)) {
          problems.push(`plan.metadata.conversation_replicas[${entry.index}].source_node_id: node ${entry.source_node_id} holds no copy`);
          continue;
        }
        take = entry.source_node_id;
      } else {
        const entry =
          kind === 'conversations' && t.copies.size > 0
            ? byKey.get(
                logicalKey(
                  String([...t.copies.values()][0]!.uid),
                  Number([...t.copies.values()][0]!.channel_type),
                  String([...t.copies.values()][0]!.channel_id),
                ),
              )
            : undefined;
        if (entry) {
          entry.used = true;
          if (entry.archive_only === true || entry.source_node_id === 0) continue;
          take = entry.source_node_id;
        }
      }
      const chosen = t.copies.get(take);
      const lag = v.lagging_nodes.filter((n) => JSON.stringify(value(n)) !== JSON.stringify(value(take)));
      if (lag.length > 0) {
        differences.push({
          kind: NAMES[kind],
          key: id,
          slot: v.slot,
          values_by_node: Object.fromEntries([...auth, ...lag].map((n) => [String(n), value(n)])),
          authoritative_nodes: auth,
          reason: `node(s) [${lag.join(', ')}] differ from the authoritative replicas of slot ${v.slot} (highest applied index)`,
        });
      }
      if (chosen) out.push(chosen);
    }
  }
  for (const e of byKey.values())
    if (!e.used) problems.push(`plan.metadata.conversation_replicas[${e.index}]: binds to no conversation of the sources`);
  return { differences, problems };
}
