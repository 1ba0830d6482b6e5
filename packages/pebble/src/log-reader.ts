/**
 * Reader of Pebble's log record format (MANIFEST and WAL files): 32 KiB blocks
 * of legacy (7-byte header) or recyclable (11-byte header, with log number)
 * chunks, assembled into records. The file is given as one buffer: MANIFESTs are
 * small and a WAL becomes the in-memory memtable anyway.
 */
import { maskedCrc32c } from './crc32c.ts';
import { PebbleCorruptionError } from './errors.ts';
import { readU32LE } from './varint.ts';

/** Size of a log block in bytes; chunks never cross it. */
export const LOG_BLOCK_SIZE = 32768;
const LEGACY_HEADER = 7;
const RECYCLABLE_HEADER = 11;

/** One assembled record: its payload and the file offset of its first chunk. */
export interface LogRecord {
  offset: number;
  data: Uint8Array;
}

/**
 * How reading stopped. `eof`: end of file at a chunk boundary. `eof-trailer`: a
 * recyclable chunk with another log number (Pebble's close trailer, or a leftover
 * of a recycled file). `zeroed`: zero-filled tail. `torn`: an invalid or cut chunk,
 * or a record missing its last chunk; `detail`/`tornOffset` say where and why.
 */
export type LogEnd = 'eof' | 'eof-trailer' | 'zeroed' | 'torn';

/** Records read from one log file and how the file ended. */
export interface LogReadResult {
  records: LogRecord[];
  end: LogEnd;
  tornOffset?: number;
  tornDetail?: string;
}

/**
 * Reads every record of a log file.
 * @param file path, for error messages.
 * @param logNum the file's own number (low 32 bits are compared with recyclable chunks); 0 for MANIFESTs.
 * @param tornTail 'stop' returns the records before a torn tail (Pebble's MANIFEST and
 *   last-WAL behaviour); 'throw' raises a corruption error naming the file and offset.
 */
export function readLogRecords(buf: Uint8Array, file: string, logNum: number, tornTail: 'stop' | 'throw'): LogReadResult {
  const records: LogRecord[] = [];
  const expectedLogNum = logNum >>> 0;
  let pos = 0;
  let pending: Uint8Array[] = [];
  let pendingOffset = -1;

  const torn = (offset: number, detail: string): LogReadResult => {
    if (tornTail === 'throw') throw new PebbleCorruptionError(file, offset, `log: ${detail}`);
    return { records, end: 'torn', tornOffset: offset, tornDetail: detail };
  };
  const finish = (end: LogEnd, offset: number): LogReadResult => {
    if (pending.length > 0) return torn(pendingOffset, `record starting here has no last chunk (log ends at ${offset})`);
    return { records, end };
  };

  for (;;) {
    const blockEnd = Math.min((Math.floor(pos / LOG_BLOCK_SIZE) + 1) * LOG_BLOCK_SIZE, buf.length);
    if (pos >= buf.length) return finish('eof', pos);
    const left = blockEnd - pos;
    if (left < LEGACY_HEADER) {
      if (blockEnd === buf.length && buf.length % LOG_BLOCK_SIZE !== 0 && !isZero(buf, pos, blockEnd)) {
        return torn(pos, `chunk header cut off by end of file (${left} bytes)`);
      }
      pos = blockEnd;
      continue;
    }
    const crc = readU32LE(buf, pos);
    const length = buf[pos + 4]! | (buf[pos + 5]! << 8);
    const type = buf[pos + 6]!;
    if (crc === 0 && length === 0 && type === 0) {
      if (left < RECYCLABLE_HEADER) {
        pos = blockEnd;
        continue;
      }
      return finish('zeroed', pos);
    }
    let headerSize: number;
    if (type >= 1 && type <= 4) headerSize = LEGACY_HEADER;
    else if (type >= 5 && type <= 8) headerSize = RECYCLABLE_HEADER;
    else return torn(pos, `invalid chunk type ${type}`);
    if (headerSize > left) return torn(pos, `chunk header cut off (${left} bytes left in block)`);
    if (headerSize === RECYCLABLE_HEADER) {
      const chunkLogNum = readU32LE(buf, pos + 7);
      if (chunkLogNum !== expectedLogNum) {
        if (pending.length === 0) return finish('eof-trailer', pos);
        return torn(pos, `chunk of log number ${chunkLogNum} inside a record of log ${expectedLogNum}`);
      }
    }
    const payloadStart = pos + headerSize;
    const payloadEnd = payloadStart + length;
    if (payloadEnd > blockEnd) return torn(pos, `chunk length ${length} runs past the end of its block or of the file`);
    if (maskedCrc32c(buf, pos + 6, payloadEnd) !== crc) return torn(pos, 'chunk checksum mismatch');
    const kind = headerSize === RECYCLABLE_HEADER ? type - 4 : type;
    const payload = buf.subarray(payloadStart, payloadEnd);
    if (kind === 1 || kind === 2) {
      if (pending.length > 0) return torn(pos, 'new record starts before the previous one ended');
      if (kind === 1) records.push({ offset: pos, data: payload });
      else {
        pending = [payload];
        pendingOffset = pos;
      }
    } else if (pending.length > 0) {
      pending.push(payload);
      if (kind === 4) {
        records.push({ offset: pendingOffset, data: concat(pending) });
        pending = [];
      }
    }
    pos = payloadEnd;
  }
}

function isZero(buf: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buf[i] !== 0) return false;
  return true;
}

function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
