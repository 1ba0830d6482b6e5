import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { openPebble, type PebbleDb } from '@parley/pebble';
import { fnv1a64Hex } from '../v2/hash.ts';

/**
 * One v2 row as stored: its column keys under one aggregate key (the row key
 * without its 2-byte column id). A plan entry binds a row by node, shard,
 * aggregate key (Base64) and `sha256`: the SHA-256 of the row's JSON, an
 * object mapping each column id (four lower-case hex digits) to the Base64
 * of its stored value, keys ascending, no white space.
 */
export interface RawRow {
  columns: Record<string, string>;
  sha256: string;
}

const hex4 = (b: Uint8Array, i: number) => ((b[i]! << 8) | b[i + 1]!).toString(16).padStart(4, '0');

/** The row under `key` in `db` (only column keys exactly two bytes longer), or undefined. */
export function readRawRow(db: PebbleDb, key: Uint8Array): RawRow | undefined {
  const end = successor(key);
  const columns: Record<string, string> = {};
  let n = 0;
  for (const e of db.iterate({ start: key, ...(end ? { end } : {}) })) {
    if (e.key.length !== key.length + 2) continue;
    columns[hex4(e.key, key.length)] = Buffer.from(e.value).toString('base64');
    n++;
  }
  if (n === 0) return undefined;
  return { columns, sha256: rowSha256(columns) };
}

/** The SHA-256 of a row's JSON (see `RawRow`). */
export function rowSha256(columns: Record<string, string>): string {
  const sorted = Object.keys(columns)
    .sort()
    .map((k) => [k, columns[k]]);
  return createHash('sha256')
    .update(JSON.stringify(Object.fromEntries(sorted)), 'utf8')
    .digest('hex');
}

/** The smallest key above every key starting with `prefix`, or undefined for all 0xff. */
function successor(prefix: Uint8Array): Uint8Array | undefined {
  const out = new Uint8Array(prefix); // a copy (Buffer#slice would share the bytes)
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i]! < 0xff) {
      out[i]!++;
      return out.subarray(0, i + 1);
    }
  }
  return undefined;
}

const fromHex = (h: string) => Buffer.from(h, 'hex');
const u64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b;
};

/** Aggregate keys of the row tables a plan can bind (spec v2-storage §3). */
export const aggregateKey = {
  /** `01 01 | 01 00 | CH | seq`. */
  message: (ch: string, seq: number) => Buffer.concat([Buffer.of(1, 1, 1, 0), fromHex(ch), u64(BigInt(seq))]),
  /** `<table> | 01 00 | CH | H64(uid)` for subscribers (04 01), denylists (07 01), allowlists (08 01). */
  member: (table: number, ch: string, uid: string) =>
    Buffer.concat([Buffer.of(table >> 8, table & 0xff, 1, 0), fromHex(ch), fromHex(fnv1a64Hex(uid))]),
  /** `09 01 | 01 00 | H64(uid) | conversation id`. */
  conversation: (uid: string, id: string) => Buffer.concat([Buffer.of(9, 1, 1, 0), fromHex(fnv1a64Hex(uid)), u64(BigInt(id))]),
  /** The conversation unique index `09 01 | 02 00 | 09 01 | H64(uid) | CH`; its value is the conversation id v2 reads. */
  conversationIndex: (uid: string, ch: string) => Buffer.concat([Buffer.of(9, 1, 2, 0, 9, 1), fromHex(fnv1a64Hex(uid)), fromHex(ch)]),
};

/** Opens shards on demand for rows read after the scan; `close` when done. */
export class RowReader {
  private readonly open = new Map<string, PebbleDb>();

  constructor(private readonly shardDir: (nodeId: number, shard: number) => string | undefined) {}

  db(nodeId: number, shard: number): PebbleDb | undefined {
    const dir = this.shardDir(nodeId, shard);
    if (dir === undefined) return undefined;
    let db = this.open.get(dir);
    if (!db) this.open.set(dir, (db = openPebble(dir)));
    return db;
  }

  row(nodeId: number, shard: number, key: Uint8Array): RawRow | undefined {
    const db = this.db(nodeId, shard);
    return db ? readRawRow(db, key) : undefined;
  }

  close(): void {
    for (const db of this.open.values()) db.close();
    this.open.clear();
  }
}
