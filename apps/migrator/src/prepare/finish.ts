import { Buffer } from 'node:buffer';
import type { Plan } from '@parley/shared';
import type { JsonlWriter } from '../archive/jsonl.ts';
import type { Policy } from '../policy.ts';
import { recordPath } from '../stages/records-dir.ts';
import type { RecordFile } from '../v2/records.ts';
import type { Collector } from './collector.ts';
import { resolveDuplicates } from './dedupe.ts';
import { buildMapping } from './mapping.ts';
import type { Quarantine } from './quarantine.ts';
import type { RowReader } from './raw-row.ts';
import { writeResolved } from './resolve.ts';
import { applyDrops } from './rewrite.ts';

export interface FinishContext {
  plan: Plan;
  policy: Policy;
  quarantine: Quarantine;
  reader: RowReader;
  /** Shards per source node. */
  shardCounts: Map<number, number>;
}

/** What the plan's rules did after the scan. */
export interface Finished {
  /** Problems with plan entries: the run stops on any. */
  problems: string[];
  archived_unread: number;
  /** Rows left out of the target, per reason. */
  excluded: Record<string, number>;
}

/**
 * Everything after the scan of one collector's rows: resolves duplicates
 * (rewriting the messages file without the dropped rows), blocks rows left
 * out of a log without `compact_sequences`, resolves and writes the other
 * record files, checks the quarantine entries against the whole scan, writes
 * the sequence mapping and chain proof (with `compact_sequences`) and fills
 * in the row digests blockers' resolutions need.
 */
export async function finishRecords(
  c: Collector,
  writers: Record<RecordFile, JsonlWriter>,
  records: string,
  ctx: FinishContext,
): Promise<Finished> {
  const { policy, reader } = ctx;
  const dup = resolveDuplicates(c.duplicates, policy, reader);
  c.findings.blockers.push(...dup.blockers);
  await writers.messages.close();
  const excluded = c.excludedCounts;
  if (dup.drops.size > 0) {
    const { writer, moved } = await applyDrops(recordPath(records, 'messages'), dup.drops, writers.excluded, c.tails);
    writers.messages = writer;
    c.retained -= moved;
    for (const seqs of dup.drops.values()) for (const reason of seqs.values()) excluded[reason] = (excluded[reason] ?? 0) + 1;
  }
  if (!policy.compactSequences) {
    const gaps = new Map(c.gapped);
    for (const e of c.duplicates)
      if (dup.drops.get(`${e.node_id}:${e.ch}`)?.size && !gaps.has(e.ch))
        gaps.set(e.ch, { node_id: e.node_id, shard: e.shard, channel_id: e.v2_channel_id, channel_type: e.channel_type, seq: e.older });
    for (const g of gaps.values()) {
      c.findings.block({
        code: 'sequence_gap',
        detail: `messages left out from inside this channel's log (first at seq ${g.seq}) would leave gaps; renumbering needs messages.compact_sequences`,
        node_id: g.node_id,
        shard: g.shard,
        channel_id: g.channel_id,
        channel_type: g.channel_type,
        message_seq: g.seq,
      });
    }
  }
  const resolved = writeResolved(c, writers, ctx);
  const problems = [
    ...resolved.problems,
    ...ctx.quarantine.afterScan(
      (ch) => c.dictionary.has(ch),
      (id, ch) => c.idUsedElsewhere(id, ch),
    ),
  ];
  await Promise.all([writers.messages.close(), writers.excluded.close()]);
  if (policy.compactSequences) {
    const { mapping, proof } = buildMapping(records);
    for (const m of mapping) writers.sequence_mapping.write(m);
    for (const p of proof) writers.duplicate_chain_proof.write(p);
  }
  for (const b of c.findings.blockers) {
    const q = b.evidence?.quarantine as { node_id: number; shard: number; key: string; sha256?: string } | undefined;
    if (q && q.sha256 === undefined) q.sha256 = reader.row(q.node_id, q.shard, Buffer.from(q.key, 'base64'))?.sha256;
  }
  return { problems, archived_unread: resolved.archivedUnread, excluded };
}
