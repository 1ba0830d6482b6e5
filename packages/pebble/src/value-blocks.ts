/**
 * Pebblev3 values: the 1-byte value prefix of SET entries and value handles
 * that point into value blocks through the value-index block.
 */
import { readBlock } from './block.ts';
import { PebbleCorruptionError } from './errors.ts';
import type { Sstable } from './sstable.ts';
import { readUvarint, type VarintCursor } from './varint.ts';

const cursor: VarintCursor = { value: 0, pos: 0 };

/** Resolves Pebblev3 SET values; keeps the value index and the last value block in memory. */
export class ValueResolver {
  private index: Uint8Array | undefined;
  private cachedNum = -1;
  private cached: Uint8Array | undefined;

  constructor(private readonly table: Sstable) {}

  /** Turns a stored SET value (prefix byte + in-place value or handle) into the user value. */
  resolve(stored: Uint8Array, entryDesc: string): Uint8Array {
    if (stored.length === 0)
      throw new PebbleCorruptionError(this.table.path, undefined, `Pebblev3 SET value without prefix byte (${entryDesc})`);
    const prefix = stored[0]!;
    const kind = prefix & 0xc0;
    if (kind === 0) return stored.subarray(1);
    if (kind !== 0x80)
      throw new PebbleCorruptionError(this.table.path, undefined, `invalid value prefix 0x${prefix.toString(16)} (${entryDesc})`);
    const fields: number[] = [];
    let p = 1;
    for (let i = 0; i < 3; i++) {
      if (!readUvarint(stored, p, stored.length, cursor))
        throw new PebbleCorruptionError(this.table.path, undefined, `invalid value handle (${entryDesc})`);
      fields.push(cursor.value);
      p = cursor.pos;
    }
    const [valueLen, blockNum, offsetInBlock] = fields as [number, number, number];
    const block = this.valueBlock(blockNum, entryDesc);
    if (offsetInBlock + valueLen > block.length) {
      throw new PebbleCorruptionError(this.table.path, undefined, `value handle runs past value block ${blockNum} (${entryDesc})`);
    }
    return block.subarray(offsetInBlock, offsetInBlock + valueLen);
  }

  private valueBlock(num: number, entryDesc: string): Uint8Array {
    if (num === this.cachedNum && this.cached) return this.cached;
    const vi = this.table.valueIndex;
    if (!vi) throw new PebbleCorruptionError(this.table.path, undefined, `value handle but no pebble.value_index (${entryDesc})`);
    this.index ??= readBlock(this.table.file, vi.handle, 'value-index');
    const width = vi.blockNumWidth + vi.offsetWidth + vi.lengthWidth;
    const at = num * width;
    if (at + width > this.index.length)
      throw new PebbleCorruptionError(this.table.path, vi.handle.offset, `value block ${num} not in value index (${entryDesc})`);
    const got = readLE(this.index, at, vi.blockNumWidth);
    if (got !== num) throw new PebbleCorruptionError(this.table.path, vi.handle.offset, `value index entry ${num} names block ${got}`);
    const offset = readLE(this.index, at + vi.blockNumWidth, vi.offsetWidth);
    const length = readLE(this.index, at + vi.blockNumWidth + vi.offsetWidth, vi.lengthWidth);
    this.cached = readBlock(this.table.file, { offset, length }, 'value');
    this.cachedNum = num;
    return this.cached;
  }
}

function readLE(buf: Uint8Array, pos: number, width: number): number {
  let v = 0;
  for (let i = width - 1; i >= 0; i--) v = v * 256 + buf[pos + i]!;
  return v;
}
