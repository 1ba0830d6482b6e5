/**
 * Opening an sstable: footer (LevelDB, RocksDB and Pebble magics), metaindex,
 * properties, range-deletion block and the data-block handles from a single or
 * two-level index. Point entries are read lazily by {@link TableIter}.
 */
import { PebbleCorruptionError, PebbleUnsupportedError } from './errors.ts';
import { BlockIter, readRawBlock } from './block-iter.ts';
import { decodeHandle, readBlock, type BlockHandle } from './block.ts';
import type { Tombstone } from './batch.ts';
import { decodeInternalKey, formatKey, Kind } from './internal-key.ts';
import { decodeProperties, type TableProperties } from './properties.ts';
import { TableFile } from './table-file.ts';
import { readU32LE } from './varint.ts';

const LEVELDB_MAGIC = '57fb808b247547db';
const ROCKSDB_MAGIC = 'f7cff485b741e288';
const PEBBLE_MAGIC = 'f09faab3f09faab3';
const FOOTER_LEN = 53;
const LEVELDB_FOOTER_LEN = 48;

/** Table format as Pebble names it, e.g. `(Pebble,v2)`. */
export type TableFormat = '(LevelDB)' | '(RocksDB,v2)' | '(Pebble,v1)' | '(Pebble,v2)' | '(Pebble,v3)';

/** Value-index location and field widths (Pebblev3 value blocks). */
export interface ValueIndex {
  handle: BlockHandle;
  blockNumWidth: number;
  offsetWidth: number;
  lengthWidth: number;
}

/** An opened sstable: metadata loaded, data blocks not yet read. Close it when done. */
export class Sstable {
  readonly file: TableFile;
  format!: TableFormat;
  metaindex!: Map<string, Uint8Array>;
  properties!: TableProperties;
  indexHandle!: BlockHandle;
  valueIndex: ValueIndex | undefined;
  private rangeDelHandle: BlockHandle | undefined;

  /** Opens `path` read-only and parses footer, metaindex and properties. */
  constructor(readonly path: string) {
    this.file = new TableFile(path);
    try {
      this.readFooter();
    } catch (err) {
      this.file.close();
      throw err;
    }
  }

  private readFooter(): void {
    const { file } = this;
    if (file.size < LEVELDB_FOOTER_LEN) throw new PebbleCorruptionError(this.path, 0, `file too small (${file.size} bytes) to be an sstable`);
    const tailLen = Math.min(FOOTER_LEN, file.size);
    const tail = file.read(file.size - tailLen, tailLen);
    const magic = Buffer.from(tail.subarray(tailLen - 8)).toString('hex');
    let footerStart: number;
    if (magic === LEVELDB_MAGIC) {
      this.format = '(LevelDB)';
      footerStart = tailLen - LEVELDB_FOOTER_LEN;
    } else if (magic === ROCKSDB_MAGIC || magic === PEBBLE_MAGIC) {
      if (tailLen < FOOTER_LEN) throw new PebbleCorruptionError(this.path, 0, 'file too small for a 53-byte footer');
      footerStart = 0;
      const version = readU32LE(tail, 41);
      if (magic === ROCKSDB_MAGIC) {
        if (version !== 2) throw new PebbleUnsupportedError(`${this.path}: RocksDB table format version ${version} is not supported (only 2)`);
        this.format = '(RocksDB,v2)';
      } else {
        if (version < 1 || version > 3) throw new PebbleUnsupportedError(`${this.path}: Pebble table format v${version} is not supported (v1..v3, Pebble v1.0.0)`);
        this.format = `(Pebble,v${version})` as TableFormat;
      }
      const checksumType = tail[0]!;
      if (checksumType !== 1) {
        throw new PebbleUnsupportedError(`${this.path}: block checksum type ${checksumType} is not supported (only 1 = CRC32C)`);
      }
      footerStart = 1;
    } else {
      throw new PebbleCorruptionError(this.path, file.size - 8, `bad magic number 0x${magic}; not an sstable`);
    }
    const meta = decodeHandle(tail, footerStart, tailLen - 8);
    const index = meta && decodeHandle(tail, meta.next, tailLen - 8);
    if (!meta || !index) throw new PebbleCorruptionError(this.path, file.size - tailLen, 'footer holds invalid block handles');
    this.indexHandle = index.handle;
    this.metaindex = readRawBlock(readBlock(file, meta.handle, 'metaindex'), this.path, meta.handle.offset);
    const propsHandle = this.metaHandle('rocksdb.properties');
    this.properties = decodeProperties(
      propsHandle ? readRawBlock(readBlock(file, propsHandle, 'properties'), this.path, propsHandle.offset) : new Map(),
      this.path,
    );
    this.rangeDelHandle = this.metaHandle('rocksdb.range_del2') ?? this.metaHandle('rocksdb.range_del');
    const vi = this.metaindex.get('pebble.value_index');
    if (vi) {
      const h = decodeHandle(vi, 0, vi.length);
      if (!h || h.next + 3 !== vi.length) throw new PebbleCorruptionError(this.path, undefined, 'invalid pebble.value_index metaindex entry');
      this.valueIndex = { handle: h.handle, blockNumWidth: vi[h.next]!, offsetWidth: vi[h.next + 1]!, lengthWidth: vi[h.next + 2]! };
    }
  }

  private metaHandle(name: string): BlockHandle | undefined {
    const v = this.metaindex.get(name);
    if (!v) return undefined;
    const h = decodeHandle(v, 0, v.length);
    if (!h) throw new PebbleCorruptionError(this.path, undefined, `invalid handle for meta block ${name}`);
    return h.handle;
  }

  /** Sequence number that overrides every key's (ingested tables), or undefined. */
  get globalSeq(): number | undefined {
    const g = this.properties.globalSeqNum;
    return g !== undefined && g !== 0 ? g : undefined;
  }

  /** All range deletions of the table, as stored (unfragmented for RocksDB v1-style blocks). */
  rangeDeletions(): Tombstone[] {
    if (!this.rangeDelHandle) return [];
    const h = this.rangeDelHandle;
    const it = new BlockIter(readBlock(this.file, h, 'range-del'), this.path, h.offset);
    const out: Tombstone[] = [];
    while (it.next()) {
      const k = decodeInternalKey(it.keyCopy());
      if (!k || k.kind !== Kind.RANGEDEL) {
        throw new PebbleCorruptionError(this.path, h.offset, `range-del block holds ${k ? formatKey(k) : 'a short key'}`);
      }
      out.push({ start: k.userKey, end: it.value().slice(), seq: this.globalSeq ?? k.seq });
    }
    return out;
  }

  /** Handles of the data blocks in key order, from the single or two-level index (loads index blocks). */
  *dataBlockHandles(): Generator<{ handle: BlockHandle; separator: Uint8Array }> {
    const top = readBlock(this.file, this.indexHandle, 'index');
    if (this.properties.indexType === 2) {
      for (const lower of this.handlesIn(top, this.indexHandle.offset)) {
        yield* this.handlesIn(readBlock(this.file, lower.handle, 'lower index'), lower.handle.offset);
      }
    } else if (this.properties.indexType === 0 || this.properties.indexType === undefined) {
      yield* this.handlesIn(top, this.indexHandle.offset);
    } else {
      throw new PebbleUnsupportedError(`${this.path}: index type ${this.properties.indexType} is not supported`);
    }
  }

  private *handlesIn(block: Uint8Array, blockOffset: number): Generator<{ handle: BlockHandle; separator: Uint8Array }> {
    const it = new BlockIter(block, this.path, blockOffset);
    while (it.next()) {
      const h = decodeHandle(it.block, it.valueStart, it.valueEnd);
      if (!h) throw new PebbleCorruptionError(this.path, blockOffset, `invalid block handle in index entry at ${it.entryOffset}`);
      yield { handle: h.handle, separator: it.key.slice(0, Math.max(0, it.keyLen - 8)) };
    }
  }

  close(): void {
    this.file.close();
  }
}
