import { Buffer } from 'node:buffer';
import type { Policy } from '../policy.ts';
import { u64Dec } from '../v2/hash.ts';
import type { Finding } from './findings.ts';
import { aggregateKey, type RowReader } from './raw-row.ts';

/** Two rows of one channel that v2 treats as one message: a repeated id, or the same sender and client message number. */
export interface DupEdge {
  node_id: number;
  shard: number;
  ch: string;
  v2_channel_id: string;
  channel_type: number;
  older: number;
  newer: number;
  relation: 'message_id' | 'client_msg_no';
}

/** Rows to take out of a node's messages: `node:channel hash` → seq → reason. */
export type Drops = Map<string, Map<number, string>>;

interface RowInfo {
  seq: number;
  message_id: string;
  from_uid: string;
  client_msg_no: string;
  stream: boolean;
}

const str = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString('utf8');

/**
 * Applies the deduplication rules (seed 001, "Message policy rules") to the
 * duplicate pairs the scan found: rows linked by a repeated id or sender +
 * client message number form groups per channel. Without
 * `keep_latest_duplicates` every group blocks. A pair keeps its newer row; a
 * group of three or more needs `resolve_duplicate_chains` and must be a
 * strictly increasing chain (each row linked to the next) with one sender, to
 * its last row. A group whose last row another policy leaves out blocks.
 */
export function resolveDuplicates(edges: readonly DupEdge[], policy: Policy, reader: RowReader): { drops: Drops; blockers: Finding[] } {
  const drops: Drops = new Map();
  const blockers: Finding[] = [];
  const byChannel = new Map<string, DupEdge[]>();
  for (const e of edges) {
    const k = `${e.node_id}:${e.ch}`;
    byChannel.set(k, [...(byChannel.get(k) ?? []), e]);
  }
  for (const [k, list] of byChannel) {
    const first = list[0]!;
    const parent = new Map<number, number>();
    const find = (x: number): number => {
      let r = x;
      while (parent.get(r) !== undefined && parent.get(r) !== r) r = parent.get(r)!;
      parent.set(x, r);
      return r;
    };
    const linked = new Set<string>();
    const relations = new Set<string>();
    for (const e of list) {
      if (!parent.has(e.older)) parent.set(e.older, e.older);
      if (!parent.has(e.newer)) parent.set(e.newer, e.newer);
      parent.set(find(e.newer), find(e.older));
      linked.add(`${Math.min(e.older, e.newer)}:${Math.max(e.older, e.newer)}`);
    }
    for (const e of list) relations.add(`${find(e.older)}:${e.relation}`);
    const groups = new Map<number, number[]>();
    for (const seq of parent.keys()) groups.set(find(seq), [...(groups.get(find(seq)) ?? []), seq]);
    for (const [root, members] of groups) {
      const seqs = members.sort((a, b) => a - b);
      const rows = seqs.map((seq) => info(reader, first, seq));
      const endpoint = rows.at(-1)!;
      const where = {
        node_id: first.node_id,
        shard: first.shard,
        channel_id: first.v2_channel_id,
        channel_type: first.channel_type,
        message_seq: endpoint.seq,
      };
      const code = relations.has(`${root}:message_id`) ? 'duplicate_message_id' : 'duplicate_client_msg_no';
      const what = rows.map((r) => `seq ${r.seq} (id ${r.message_id}, "${r.from_uid}" / "${r.client_msg_no}")`).join(', ');
      const evidence = { seqs, chain: seqs.length > 2 };
      if (!policy.keepLatestDuplicates || (seqs.length > 2 && !policy.resolveDuplicateChains)) {
        const detail =
          code === 'duplicate_message_id'
            ? `message id ${endpoint.message_id} is used by ${seqs.length} rows of this channel: ${what}`
            : `client_msg_no "${endpoint.client_msg_no}" of "${endpoint.from_uid}" is used by ${seqs.length} rows of this channel: ${what}`;
        blockers.push({ code, detail, ...where, evidence });
        continue;
      }
      if (policy.excludeStreams && endpoint.stream) {
        blockers.push({
          code: 'duplicate_endpoint_excluded',
          detail: `the newest of the duplicates ${what} is a stream message messages.exclude_streams leaves out`,
          ...where,
          evidence,
        });
        continue;
      }
      if (seqs.length > 2) {
        const broken = seqs.findIndex((s, i) => i > 0 && !linked.has(`${seqs[i - 1]}:${s}`));
        if (broken > 0) {
          blockers.push({
            code: 'duplicate_chain_rejected',
            detail: `not one increasing replacement chain: seq ${seqs[broken - 1]} is not repeated by seq ${seqs[broken]} (several endpoints): ${what}`,
            ...where,
            evidence,
          });
          continue;
        }
        if (new Set(rows.map((r) => r.from_uid)).size > 1) {
          blockers.push({ code: 'duplicate_chain_rejected', detail: `the chain changes sender (identity): ${what}`, ...where, evidence });
          continue;
        }
      }
      let channel = drops.get(k);
      if (!channel) drops.set(k, (channel = new Map()));
      const reason = seqs.length > 2 ? 'resolve_duplicate_chains' : 'keep_latest_duplicates';
      for (const s of seqs.slice(0, -1)) channel.set(s, reason);
    }
  }
  return { drops, blockers };
}

/** The columns of a message row the rules compare, read again from the source. */
function info(reader: RowReader, e: DupEdge, seq: number): RowInfo {
  const row = reader.row(e.node_id, e.shard, aggregateKey.message(e.ch, seq));
  if (!row) throw new Error(`node ${e.node_id} shard ${e.shard}: message ${e.v2_channel_id} seq ${seq} vanished after the scan`);
  const c = row.columns;
  return {
    seq,
    message_id: u64Dec(Buffer.from(c['0104'] ?? '', 'base64'), 0),
    from_uid: str(c['010b']),
    client_msg_no: str(c['0106']),
    stream: ((Buffer.from(c['0102'] ?? '', 'base64')[0] ?? 0) & 0x02) !== 0,
  };
}
