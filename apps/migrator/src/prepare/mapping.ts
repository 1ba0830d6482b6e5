import { readJsonl } from '../archive/jsonl.ts';
import { recordPath } from '../stages/records-dir.ts';
import type { ChainProofRecord, ExcludedRecord, MappingRecord, MessageRecord } from '../v2/records.ts';

interface Row {
  seq: number;
  message_id: string;
  from_uid: string;
  client_msg_no: string;
  retained: boolean;
  chain: boolean;
}

interface Channel {
  channel_id: string;
  channel_type: number;
  v2_channel_id: string;
  rows: Row[];
}

const related = (a: Row, b: Row): ChainProofRecord['relation'] | undefined => {
  const id = a.message_id === b.message_id;
  const cmn = a.from_uid !== '' && a.client_msg_no !== '' && a.from_uid === b.from_uid && a.client_msg_no === b.client_msg_no;
  return id && cmn ? 'message_id+client_msg_no' : id ? 'message_id' : cmn ? 'client_msg_no' : undefined;
};

/**
 * The sequence mapping of a records directory (seed 001,
 * `compact_sequences`), rebuilt from the retained and the excluded messages
 * alone: per channel (by type, then Parley id), every message row in v2 seq
 * order with its target seq (its rank among the retained rows, 0 when left
 * out) and boundary seq (retained rows at or before it). Also the proof of
 * every duplicate chain (`resolve_duplicate_chains`): each replaced row, the
 * next row of its chain and the chain's retained end. Prepare writes both;
 * `export-map` rebuilds them from an archive, byte for byte.
 */
export function buildMapping(records: string): { mapping: MappingRecord[]; proof: ChainProofRecord[] } {
  const channels = new Map<string, Channel>();
  const add = (m: MessageRecord, retained: boolean, chain: boolean) => {
    const k = `${m.channel_type}\u0000${m.channel_id}`;
    let c = channels.get(k);
    if (!c) channels.set(k, (c = { channel_id: m.channel_id, channel_type: m.channel_type, v2_channel_id: m.v2_channel_id, rows: [] }));
    c.rows.push({ seq: m.message_seq, message_id: m.message_id, from_uid: m.from_uid, client_msg_no: m.client_msg_no, retained, chain });
  };
  for (const m of readJsonl<MessageRecord>(recordPath(records, 'messages'))) add(m, true, false);
  for (const e of readJsonl<ExcludedRecord>(recordPath(records, 'excluded'))) {
    if (e.kind === 'message') add(e.record as unknown as MessageRecord, false, e.reason === 'resolve_duplicate_chains');
  }
  const keys = [...channels.keys()].sort((a, b) => {
    const [ta, ia] = a.split('\u0000');
    const [tb, ib] = b.split('\u0000');
    return Number(ta) - Number(tb) || (ia! < ib! ? -1 : ia! > ib! ? 1 : 0);
  });
  const mapping: MappingRecord[] = [];
  const proof: ChainProofRecord[] = [];
  for (const k of keys) {
    const c = channels.get(k)!;
    c.rows.sort((a, b) => a.seq - b.seq);
    let retained = 0;
    for (const r of c.rows) {
      if (r.retained) retained++;
      mapping.push({
        channel_id: c.channel_id,
        channel_type: c.channel_type,
        v2_channel_id: c.v2_channel_id,
        v2_seq: r.seq,
        message_id: r.message_id,
        target_seq: r.retained ? retained : 0,
        boundary_seq: retained,
      });
    }
    proof.push(...chains(c));
  }
  return { mapping, proof };
}

/** The chains of a channel: its replaced rows with the rows they link to, each in seq order to its retained end. */
function chains(c: Channel): ChainProofRecord[] {
  const replaced = c.rows.filter((r) => r.chain);
  if (replaced.length === 0) return [];
  const out: ChainProofRecord[] = [];
  const done = new Set<number>();
  for (const start of replaced) {
    if (done.has(start.seq)) continue;
    // follow the chain forward from its first replaced row: the next row linked to this one
    const chain: Row[] = [start];
    for (let at = start; ;) {
      const next = c.rows.find((r) => r.seq > at.seq && (r.chain || r.retained) && related(at, r) !== undefined);
      if (!next) break;
      chain.push(next);
      if (next.retained) break;
      at = next;
    }
    const end = chain.at(-1)!;
    for (let i = 0; i < chain.length - 1; i++) {
      const r = chain[i]!;
      if (done.has(r.seq)) continue;
      done.add(r.seq);
      out.push({
        channel_id: c.channel_id,
        channel_type: c.channel_type,
        v2_seq: r.seq,
        message_id: r.message_id,
        client_msg_no: r.client_msg_no,
        from_uid: r.from_uid,
        replaced_by_seq: chain[i + 1]!.seq,
        relation: related(r, chain[i + 1]!)!,
        endpoint_seq: end.seq,
        endpoint_message_id: end.message_id,
      });
    }
  }
  return out.sort((a, b) => a.v2_seq - b.v2_seq);
}
