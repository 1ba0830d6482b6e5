import { describe, expect, it } from 'vitest';
import type { PebbleDb } from '@parley/pebble';
import { scanShard, type ShardSink } from './scan-shard.ts';

/** A key: table id, data type, a zero byte, then the given bytes. */
const key = (table: number, type: number, ...rest: number[]) => Uint8Array.of(table >> 8, table & 0xff, type, 0, ...rest);
const u64 = (n: bigint) => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, n);
  return [...b];
};
const text = (s: string) => new TextEncoder().encode(s);
const hash = [1, 2, 3, 4, 5, 6, 7, 8];

/** Every sink call in order, keys and values as hex. */
function scan(entries: Array<[Uint8Array, Uint8Array]>): unknown[] {
  const calls: unknown[] = [];
  const sink = new Proxy({} as ShardSink, {
    get:
      (_t, name) =>
      (...args: unknown[]) =>
        calls.push([name, ...args.map((a) => (a instanceof Uint8Array ? Buffer.from(a).toString('hex') : a))]),
  });
  // the entries (listed in key order) within each range asked for, as the reader gives them
  const cmp = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b);
  let yielded = 0;
  const db = {
    *iterate(range: { start?: Uint8Array; end?: Uint8Array } = {}) {
      for (const [k, value] of entries) {
        if ((range.start && cmp(k, range.start) < 0) || (range.end && cmp(k, range.end) >= 0)) continue;
        yielded++;
        yield { key: k, value };
      }
    },
  } as unknown as PebbleDb;
  expect(scanShard(db, sink)).toEqual({ keys: yielded });
  return calls;
}

describe('scanShard', () => {
  it('reads every key but the index entries of tables rebuilt from rows, and reports what it does not know', () => {
    const entries: Array<[Uint8Array, Uint8Array]> = [
      [key(0x0101, 2, 1), Uint8Array.of(1)],
      [key(0x0101, 3, 1), Uint8Array.of(1)],
      [key(0x0201, 3, 1), Uint8Array.of(1)],
      [key(0x0501, 2, 1), Uint8Array.of(1)],
      [key(0x1601, 2, 1), Uint8Array.of(1)],
      [key(0x1701, 2, 1), Uint8Array.of(1)],
      [key(0x2201, 2, 1), Uint8Array.of(1)],
    ];
    // 0x0501 is ignored, 0x1701 is the legacy StreamV2 table, 0x2201 is unknown: only those are read
    expect(scan(entries)).toEqual([
      ['problem', 'legacy_stream_v2', '1701020001', 'legacy StreamV2 table 1701 (v2.2.1-v2.2.3 streams)'],
      ['problem', 'unknown_key', '2201020001', 'table 2201, data type 2, length 5'],
    ]);
  });

  it('groups column keys into rows and decodes every message column', () => {
    const row = (col: number) => key(0x0101, 1, ...hash, ...u64(7n), 0x01, col);
    const calls = scan([
      [row(0x01), Uint8Array.of(0x52)],
      [row(0x02), Uint8Array.of(2)],
      [row(0x03), Uint8Array.of(0, 0, 0, 60)],
      [row(0x04), Uint8Array.of(...u64(2028498040494493696n))],
      [row(0x05), Uint8Array.of(...u64(7n))],
      [row(0x06), text('cmn-1')],
      [row(0x07), Uint8Array.of(0x69, 0xa5, 0x3b, 0xa3)],
      [row(0x08), text('g1')],
      [row(0x09), Uint8Array.of(2)],
      [row(0x0a), text('t')],
      [row(0x0b), text('u1')],
      [row(0x0c), text('hi')],
      [row(0x0d), Uint8Array.of(...u64(3n))],
      [row(0x0e), text('')],
      [key(0x0101, 2, ...hash, ...u64(7n)), new Uint8Array(0)],
      [key(0x0101, 3, ...hash), new Uint8Array(0)],
      [key(0x0101, 4, ...hash), Uint8Array.of(...u64(9n), ...u64(1772451001425858567n))],
    ]);
    // (the last-seq key sorts after the rows; prepare reads it ahead of them with readTails)
    expect(calls).toEqual([
      [
        'message',
        {
          ch: '0102030405060708',
          seq: 7,
          header: 0x52,
          setting: 2,
          expire: 60,
          message_id: '2028498040494493696',
          column_seq: 7,
          client_msg_no: 'cmn-1',
          timestamp: 0x69a53ba3,
          channel_id: 'g1',
          channel_type: 2,
          topic: 't',
          from_uid: 'u1',
          payload: 'aGk=',
          term: '3',
          stream_no: '',
        },
      ],
      ['tail', '0102030405060708', 9, '1772451001425858567'],
    ]);
  });

  it('reports unknown and undecodable columns in place, keeps silent ones quiet and archives cluster configs', () => {
    const user = (col: number) => key(0x0201, 1, ...u64(5n), 0x02, col);
    const cfg = (col: number) => key(0x0b01, 1, ...hash, 0x0b, col);
    const calls = scan([
      [user(0x01), text('u1')],
      [user(0x03), Uint8Array.of(1)],
      [user(0x0b), Uint8Array.of(0xff)],
      [user(0x0c), Uint8Array.of(1)],
      [cfg(0x01), text('g1')],
      [cfg(0x09), Uint8Array.of(1)],
      [key(0x0b01, 1, 1, 2), Uint8Array.of(3)],
      [key(0x1001, 1, ...u64(1n), 0x10, 0x02), text('x')],
      [key(0x1101, 1, 1), Uint8Array.of(1)],
      [key(0x1301, 1, 1), Uint8Array.of(1)],
      [key(0x2201, 1, 1), Uint8Array.of(1)],
    ]);
    expect(calls).toEqual([
      ['problem', 'undecodable_column', '020101000000000000000005020b', 'The encoded data was not valid for encoding utf-8'],
      ['problem', 'unknown_column', '020101000000000000000005020c', 'column 020c of table 0201'],
      ['user', { uid: 'u1', plugin_no: '', created_at_ns: '0', updated_at_ns: '0' }],
      ['archived', 'cluster_config', '0b01010001020304050607080b01', '6731'],
      ['archived', 'cluster_config', '0b01010001020304050607080b09', '01'],
      ['clusterConfig', '0102030405060708', 'g1', 0],
      ['archived', 'cluster_config', '0b0101000102', '03'],
      ['problem', 'unknown_column', '1001010000000000000000011002', 'column 1002 of table 1001'],
      ['systemUid', undefined],
      ['problem', 'legacy_stream_storage', '1101010001', 'legacy stream table 1101'],
      ['problem', 'unknown_key', '2201010001', 'table 2201, data type 1, length 5'],
    ]);
  });
});
