import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { policyOf } from '../policy.ts';
import type { Plan } from '@parley/shared';
import { resolveDuplicates, type DupEdge } from './dedupe.ts';
import { buildMapping } from './mapping.ts';
import { rowSha256, type RawRow, type RowReader } from './raw-row.ts';

interface Msg {
  seq: number;
  id: bigint;
  from: string;
  cmn: string;
  stream?: boolean;
}

const CH = '00112233445566aa';

/** The message rows of one channel as a row source (the columns the rules read). */
function rows(msgs: Msg[]): RowReader {
  const bySeq = new Map(msgs.map((m) => [m.seq, m]));
  return {
    row(_node: number, _shard: number, key: Uint8Array): RawRow | undefined {
      const m = bySeq.get(Number(Buffer.from(key).readBigUInt64BE(12)));
      if (!m) return undefined;
      const id = Buffer.alloc(8);
      id.writeBigUInt64BE(m.id);
      const columns = {
        '0102': Buffer.of(m.stream ? 2 : 0).toString('base64'),
        '0104': id.toString('base64'),
        '0106': Buffer.from(m.cmn).toString('base64'),
        '010b': Buffer.from(m.from).toString('base64'),
      };
      return { columns, sha256: rowSha256(columns) };
    },
  } as unknown as RowReader;
}

const edge = (older: number, newer: number, relation: DupEdge['relation']): DupEdge => ({
  node_id: 1,
  shard: 0,
  ch: CH,
  v2_channel_id: 'g1',
  channel_type: 2,
  older,
  newer,
  relation,
});
const policy = (messages: Plan['messages']) => policyOf({ messages } as Plan);

describe('duplicate groups', () => {
  const chain: Msg[] = [
    { seq: 2, id: 100n, from: 'u1', cmn: 'a' },
    { seq: 5, id: 200n, from: 'u1', cmn: 'a' },
    { seq: 9, id: 200n, from: 'u1', cmn: 'b' },
  ];
  const chainEdges = [edge(2, 5, 'client_msg_no'), edge(5, 9, 'message_id')];

  it('a pair keeps its newer row; without keep_latest_duplicates it blocks', () => {
    const pair = [edge(2, 5, 'client_msg_no')];
    expect(resolveDuplicates(pair, policy({ keep_latest_duplicates: true }), rows(chain)).drops.get(`1:${CH}`)).toEqual(
      new Map([[2, 'keep_latest_duplicates']]),
    );
    const blocked = resolveDuplicates(pair, policy({}), rows(chain));
    expect(blocked.blockers.map((b) => [b.code, b.message_seq])).toEqual([['duplicate_client_msg_no', 5]]);
  });

  it('a strictly increasing chain with one sender resolves to its last row with resolve_duplicate_chains, and blocks without it', () => {
    const ok = resolveDuplicates(chainEdges, policy({ keep_latest_duplicates: true, resolve_duplicate_chains: true }), rows(chain));
    expect(ok.blockers).toEqual([]);
    expect(ok.drops.get(`1:${CH}`)).toEqual(
      new Map([
        [2, 'resolve_duplicate_chains'],
        [5, 'resolve_duplicate_chains'],
      ]),
    );
    const without = resolveDuplicates(chainEdges, policy({ keep_latest_duplicates: true }), rows(chain));
    expect(without.blockers.map((b) => [b.code, b.evidence?.chain])).toEqual([['duplicate_message_id', true]]);
  });

  it('rejects several endpoints, a change of sender and an endpoint another policy leaves out', () => {
    const p = policy({ keep_latest_duplicates: true, resolve_duplicate_chains: true, exclude_streams: true });
    const fork = resolveDuplicates(
      [edge(2, 5, 'client_msg_no'), edge(2, 9, 'message_id')],
      p,
      rows([chain[0]!, chain[1]!, { seq: 9, id: 100n, from: 'u1', cmn: 'c' }]),
    );
    expect(fork.blockers.map((b) => b.code)).toEqual(['duplicate_chain_rejected']);
    expect(fork.blockers[0]!.detail).toMatch(/several endpoints/);
    const senders = resolveDuplicates(
      [edge(2, 5, 'message_id'), edge(5, 9, 'message_id')],
      p,
      rows([
        { seq: 2, id: 7n, from: 'u1', cmn: '' },
        { seq: 5, id: 7n, from: 'u2', cmn: '' },
        { seq: 9, id: 7n, from: 'u1', cmn: '' },
      ]),
    );
    expect(senders.blockers.map((b) => b.code)).toEqual(['duplicate_chain_rejected']);
    expect(senders.blockers[0]!.detail).toMatch(/changes sender/);
    const stream = resolveDuplicates([edge(2, 5, 'client_msg_no')], p, rows([chain[0]!, { ...chain[1]!, stream: true }]));
    expect(stream.blockers.map((b) => b.code)).toEqual(['duplicate_endpoint_excluded']);
    expect(stream.drops.size).toBe(0);
  });

  it('the mapping and the chain proof are rebuilt from the retained and excluded records alone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-map-'));
    const rec = (m: Msg & { v2: string }) => ({
      node_id: 1,
      shard: 0,
      channel_id: m.v2,
      v2_channel_id: m.v2,
      channel_type: 2,
      message_seq: m.seq,
      message_id: String(m.id),
      client_msg_no: m.cmn,
      from_uid: m.from,
      header: 82,
      setting: 0,
      expire: 0,
      timestamp: 1,
      topic: '',
      stream_no: '',
      term: '1',
      payload: '',
    });
    const kept = [
      { seq: 1, id: 50n, from: 'u9', cmn: 'z', v2: 'g1' },
      { ...chain[2]!, v2: 'g1' },
      { seq: 10, id: 300n, from: 'u1', cmn: 'd', v2: 'g1' },
    ];
    writeFileSync(join(dir, 'messages.jsonl'), kept.map((m) => `${JSON.stringify(rec(m))}\n`).join(''));
    writeFileSync(
      join(dir, 'excluded.jsonl'),
      [chain[0]!, chain[1]!]
        .map(
          (m) =>
            `${JSON.stringify({ kind: 'message', reason: 'resolve_duplicate_chains', node_id: 1, shard: 0, key: '', record: rec({ ...m, v2: 'g1' }) })}\n`,
        )
        .join(''),
    );
    const { mapping, proof } = buildMapping(dir);
    expect(mapping.map((m) => [m.v2_seq, m.target_seq, m.boundary_seq])).toEqual([
      [1, 1, 1],
      [2, 0, 1],
      [5, 0, 1],
      [9, 2, 2],
      [10, 3, 3],
    ]);
    expect(proof.map((p) => [p.v2_seq, p.replaced_by_seq, p.relation, p.endpoint_seq, p.endpoint_message_id])).toEqual([
      [2, 5, 'client_msg_no', 9, '200'],
      [5, 9, 'message_id', 9, '200'],
    ]);
  });
});
