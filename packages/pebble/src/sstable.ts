/**
 * Opening an sstable: footer (LevelDB, RocksDB and Pebble magics), metaindex,
 * properties, range-deletion block and the data-block index (single or
 * two-level, loaded once). Point entries are read lazily by {@link TableIter}.
 */
import { Buffer } from 'node:buffer';
import { PebbleCorruptionError, PebbleUnsupportedError } from './errors.ts';
import { BlockIter, readRawBlock } from './block-iter.ts';
import { decodeHandle, readBlock, type BlockHandle } from './block.ts';
import type { Tombstone } from './batch.ts';
import { compareBytes, decodeInternalKey, formatKey, Kind } from './internal-key.ts';
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

/** Data-block handles of a table in key order, with each block's separator (a user key >= every user key of the block, < the next block's). */
export interface DataBlockIndex {
  handles: BlockHandle[];
  separators: Uint8Array[];
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
  private blockIndex: DataBlockIndex | undefined;
  /** The data block read last and its file offset (see {@link dataBlock}). */
  private lastBlock: Uint8Array | undefined;
  private lastBlockOffset = -1;

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
    if (file.size < LEVELDB_FOOTER_LEN)
      throw new PebbleCorruptionError(this.path, 0, `file too small (${file.size} bytes) to be an sstable`);
    const tailLen = Math.min(FOOTER_LEN, file.size);
    const tail = file.read(file.size - tailLen, tailLen);
    const magic = Buffer.from(tail.subarray(tailLen - 8)).toString('hex');
    let footerStart: number;
    if (magic === LEVELDB_MAGIC) {
      this.format = '(LevelDB)';
      footerStart = tailLen - LEVELDB_FOOTER_LEN;
    } else if (magic === ROCKSDB_MAGIC || magic === PEBBLE_MAGIC) {
      if (tailLen < FOOTER_LEN) throw new PebbleCorruptionError(this.path, 0, 'file too small for a 53-byte footer');
      const version = readU32LE(tail, 41);
      if (magic === ROCKSDB_MAGIC) {
        if (version !== 2)
          throw new PebbleUnsupportedError(`${this.path}: RocksDB table format version ${version} is not supported (only 2)`);
        this.format = '(RocksDB,v2)';
      } else {
        if (version < 1 || version > 3)
          throw new PebbleUnsupportedError(`${this.path}: Pebble table format v${version} is not supported (v1..v3, Pebble v1.0.0)`);
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
      if (!h || h.next + 3 !== vi.length)
        throw new PebbleCorruptionError(this.path, undefined, 'invalid pebble.value_index metaindex entry');
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

  /**
   * The data blocks in key order, from the single or two-level index: read and
   * checked on the first call, then kept (a table cached by its database serves
   * every iteration from the same arrays).
   */
  dataBlockIndex(): DataBlockIndex {
    return (this.blockIndex ??= this.readIndex());
  }

  /**
   * The data block at `handle`, checked and decompressed. The block read last is
   * kept (blocks are never written to, so iterators can share it): an iteration
   * that seeks into the block where the previous one stopped, as consecutive key
   * ranges do, reads nothing.
   */
  dataBlock(handle: BlockHandle): Uint8Array {
    if (handle.offset === this.lastBlockOffset && this.lastBlock) return this.lastBlock;
    const block = readBlock(this.file, handle, 'data');
    this.lastBlock = block;
    this.lastBlockOffset = handle.offset;
    return block;
  }

  /** Handles and separators of the data blocks in key order (a view over {@link dataBlockIndex}). */
  dataBlockHandles(): { handle: BlockHandle; separator: Uint8Array }[] {
    const { handles, separators } = this.dataBlockIndex();
    return handles.map((handle, i) => ({ handle, separator: separators[i]! }));
  }

  private readIndex(): DataBlockIndex {
    const top = readBlock(this.file, this.indexHandle, 'index');
    const out: DataBlockIndex = { handles: [], separators: [] };
    if (this.properties.indexType === 2) {
      const lower: DataBlockIndex = { handles: [], separators: [] };
      this.handlesIn(top, this.indexHandle.offset, lower);
      for (const h of lower.handles) this.handlesIn(readBlock(this.file, h, 'lower index'), h.offset, out);
    } else if (this.properties.indexType === 0 || this.properties.indexType === undefined) {
      this.handlesIn(top, this.indexHandle.offset, out);
    } else {
      throw new PebbleUnsupportedError(`${this.path}: index type ${this.properties.indexType} is not supported`);
    }
    // Seeks binary-search the separators: they must not decrease (each bounds its block's keys from above).
    const seps = out.separators;
    for (let i = 1; i < seps.length; i++) {
      if (compareBytes(seps[i - 1]!, seps[i]!) > 0) {
        throw new PebbleCorruptionError(
          this.path,
          this.indexHandle.offset,
          `index separators out of order: data block ${i} of ${seps.length} has a separator below the previous one`,
        );
      }
    }
    return out;
  }

  /** Appends the handles and separators of index block `block` (at file offset `blockOffset`) to `out`. */
  private handlesIn(block: Uint8Array, blockOffset: number, out: DataBlockIndex): void {
    const it = new BlockIter(block, this.path, blockOffset);
    while (it.next()) {
      const h = decodeHandle(it.block, it.valueStart, it.valueEnd);
      if (!h) throw new PebbleCorruptionError(this.path, blockOffset, `invalid block handle in index entry at ${it.entryOffset}`);
      out.handles.push(h.handle);
      out.separators.push(it.key.slice(0, Math.max(0, it.keyLen - 8)));
    }
  }

  close(): void {
    this.lastBlock = undefined;
    this.file.close();
  }
}
