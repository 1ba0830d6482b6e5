/**
 * The properties block (`rocksdb.properties`): decodes the few properties the
 * reader uses and keeps every raw value for diagnostics.
 */
import { Buffer } from 'node:buffer';
import { PebbleCorruptionError } from './errors.ts';
import { readUvarint, readU32LE, type VarintCursor } from './varint.ts';

/** Decoded table properties; counts are entries, not bytes. */
export interface TableProperties {
  comparer?: string;
  merger?: string;
  compression?: string;
  numEntries?: number;
  numDeletions?: number;
  numRangeDeletions?: number;
  numDataBlocks?: number;
  numValueBlocks?: number;
  /** 0 = single-level index, 2 = two-level. */
  indexType?: number;
  globalSeqNum?: number;
  /** Every property, raw. */
  raw: Map<string, Uint8Array>;
}

const cursor: VarintCursor = { value: 0, pos: 0 };

/** Decodes the raw name → bytes map of a properties block. */
export function decodeProperties(raw: Map<string, Uint8Array>, path: string): TableProperties {
  const str = (name: string): string | undefined => {
    const v = raw.get(name);
    return v ? Buffer.from(v).toString('utf8') : undefined;
  };
  const uv = (name: string): number | undefined => {
    const v = raw.get(name);
    if (!v) return undefined;
    if (!readUvarint(v, 0, v.length, cursor)) throw new PebbleCorruptionError(path, undefined, `property ${name} is not a valid varint`);
    return cursor.value;
  };
  const u32 = (name: string): number | undefined => {
    const v = raw.get(name);
    if (!v) return undefined;
    if (v.length !== 4) throw new PebbleCorruptionError(path, undefined, `property ${name} should be 4 bytes, is ${v.length}`);
    return readU32LE(v, 0);
  };
  const u64 = (name: string): number | undefined => {
    const v = raw.get(name);
    if (!v) return undefined;
    if (v.length !== 8) throw new PebbleCorruptionError(path, undefined, `property ${name} should be 8 bytes, is ${v.length}`);
    const n = readU32LE(v, 4) * 2 ** 32 + readU32LE(v, 0);
    if (n > Number.MAX_SAFE_INTEGER) throw new PebbleCorruptionError(path, undefined, `property ${name} is above 2^53`);
    return n;
  };
  return {
    comparer: str('rocksdb.comparator'),
    merger: str('rocksdb.merge.operator'),
    compression: str('rocksdb.compression'),
    numEntries: uv('rocksdb.num.entries'),
    numDeletions: uv('rocksdb.deleted.keys'),
    numRangeDeletions: uv('rocksdb.num.range-deletions'),
    numDataBlocks: uv('rocksdb.num.data.blocks'),
    numValueBlocks: uv('pebble.num.value-blocks'),
    indexType: u32('rocksdb.block.based.table.index.type'),
    globalSeqNum: u64('rocksdb.external_sst_file.global_seqno'),
    raw,
  };
}
