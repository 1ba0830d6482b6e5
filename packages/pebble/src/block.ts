/**
 * Physical blocks of an sstable: handle decoding, the 5-byte trailer
 * (compression type + masked CRC32C over block and type byte), decompression.
 */
import { decompress as zstdDecompress } from 'fzstd';
import { snappyUncompressor } from 'hysnappy';
import { maskedCrc32c } from './crc32c.ts';
import { PebbleCorruptionError, PebbleUnsupportedError } from './errors.ts';
import type { TableFile } from './table-file.ts';
import { readUvarint, readU32LE, type VarintCursor } from './varint.ts';

/** Location of a block inside its file; `length` excludes the 5-byte trailer. */
export interface BlockHandle {
  offset: number;
  length: number;
}

/** Size of the trailer that follows every block. */
export const BLOCK_TRAILER_SIZE = 5;

const cursor: VarintCursor = { value: 0, pos: 0 };

/**
 * Snappy: hysnappy's WebAssembly build of the reference decoder (instantiated
 * once; ~3x faster than the pure-JS snappyjs on this data). It needs the
 * decompressed length up front, which the stream's varint header gives.
 */
let snappyDecoder: ((input: Uint8Array, outputLength: number) => Uint8Array) | undefined;
/** Snappy cannot expand more than ~21x (a 3-byte copy tag yields at most 64 bytes); a larger claimed length is corruption. */
const SNAPPY_MAX_RATIO = 24;

function snappyUncompress(body: Uint8Array, path: string, offset: number): Uint8Array {
  if (!readUvarint(body, 0, Math.min(body.length, 5), cursor) || cursor.value > body.length * SNAPPY_MAX_RATIO + 64) {
    throw new PebbleCorruptionError(path, offset, 'snappy block has an invalid length header');
  }
  snappyDecoder ??= snappyUncompressor();
  return snappyDecoder(body, cursor.value);
}

/**
 * Decodes a block handle at `buf[pos]`; returns it and the position after it,
 * or undefined when the bytes are not a valid handle. Extra bytes after the two
 * varints (block properties in index values) are left for the caller to ignore.
 */
export function decodeHandle(buf: Uint8Array, pos: number, end: number): { handle: BlockHandle; next: number } | undefined {
  if (!readUvarint(buf, pos, end, cursor)) return undefined;
  const offset = cursor.value;
  if (!readUvarint(buf, cursor.pos, end, cursor)) return undefined;
  return { handle: { offset, length: cursor.value }, next: cursor.pos };
}

/** Checksum algorithm named by the footer: 1 = CRC32C. */
export type ChecksumType = 1;

/**
 * Reads the block at `handle`, verifies its checksum and returns the
 * decompressed contents. `what` names the block kind in error messages.
 */
export function readBlock(file: TableFile, handle: BlockHandle, what: string): Uint8Array {
  if (handle.offset + handle.length + BLOCK_TRAILER_SIZE > file.size) {
    throw new PebbleCorruptionError(
      file.path,
      handle.offset,
      `${what} block (length ${handle.length}) runs past the end of the file (size ${file.size})`,
    );
  }
  // Compressed bytes are consumed here: read them into reused memory; an uncompressed body is copied out below.
  const raw = file.readTransient(handle.offset, handle.length + BLOCK_TRAILER_SIZE);
  const type = raw[handle.length]!;
  const stored = readU32LE(raw, handle.length + 1);
  const actual = maskedCrc32c(raw, 0, handle.length + 1);
  if (stored !== actual) {
    throw new PebbleCorruptionError(
      file.path,
      handle.offset,
      `checksum mismatch in ${what} block ${handle.offset}/${handle.length} (stored 0x${stored.toString(16)}, computed 0x${actual.toString(16)})`,
    );
  }
  const body = raw.subarray(0, handle.length);
  try {
    return decompressBlock(body, type, file.path, handle.offset);
  } catch (err) {
    if (err instanceof PebbleCorruptionError || err instanceof PebbleUnsupportedError) throw err;
    throw new PebbleCorruptionError(file.path, handle.offset, `cannot decompress ${what} block: ${(err as Error).message}`);
  }
}

function decompressBlock(body: Uint8Array, type: number, path: string, offset: number): Uint8Array {
  switch (type) {
    case 0:
      return body.slice();
    case 1:
      return snappyUncompress(body, path, offset);
    case 7: {
      if (!readUvarint(body, 0, body.length, cursor)) throw new PebbleCorruptionError(path, offset, 'zstd block lacks its length prefix');
      const expected = cursor.value;
      const out = zstdDecompress(body.subarray(cursor.pos), new Uint8Array(expected));
      if (out.length !== expected)
        throw new PebbleCorruptionError(path, offset, `zstd block decompressed to ${out.length} bytes, expected ${expected}`);
      return out;
    }
    default:
      throw new PebbleUnsupportedError(`${path}: block at offset ${offset} uses compression type ${type}, which Pebble cannot read`);
  }
}
