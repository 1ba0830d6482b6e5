import { describe, expect, it } from 'vitest';
import { crc32c, PebbleCorruptionError, readLogRecords } from '../src/index.ts';
import { pattern, writeLog } from './log-writer.ts';

describe('CRC32C', () => {
  it('matches the standard check value and the RFC 3720 vectors', () => {
    expect(crc32c(new TextEncoder().encode('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
  });
});

describe('log records', () => {
  const records = [pattern(10, 1), pattern(40000, 2), pattern(0, 3), pattern(32768 - 7 - 7, 4), pattern(100000, 5), pattern(5, 6)];

  it.each([false, true])('round-trips records spanning blocks (recyclable=%s)', (recyclable) => {
    const log = writeLog(records, { recyclable, logNum: 9 });
    const res = readLogRecords(log, 'x.log', 9, 'throw');
    expect(res.end).toBe('eof');
    expect(res.records).toHaveLength(records.length);
    res.records.forEach((r, i) => expect(Buffer.from(r.data).equals(records[i]!)).toBe(true));
    expect(res.records[0]!.offset).toBe(0);
  });

  it('stops at the EOF trailer and at chunks of a previous use of a recycled file', () => {
    const log = writeLog(records.slice(0, 2), { recyclable: true, logNum: 7, eofTrailer: true });
    const res = readLogRecords(log, '000007.log', 7, 'throw');
    expect(res.end).toBe('eof-trailer');
    expect(res.records).toHaveLength(2);
    const old = writeLog([pattern(50, 9), pattern(50, 10)], { recyclable: true, logNum: 3 });
    const recycled = writeLog([pattern(50, 11)], { recyclable: true, logNum: 7 });
    const mixed = new Uint8Array(old);
    mixed.set(recycled);
    const r2 = readLogRecords(mixed, '000007.log', 7, 'throw');
    expect(r2.records.map((r) => r.data)).toStrictEqual([pattern(50, 11)]);
    expect(r2.end).toBe('eof-trailer');
  });

  it('treats a zeroed tail as the end', () => {
    const log = writeLog([pattern(100, 1)], { recyclable: true, logNum: 1 });
    const padded = new Uint8Array(log.length + 1000);
    padded.set(log);
    const res = readLogRecords(padded, 'x', 1, 'throw');
    expect(res.end).toBe('zeroed');
    expect(res.records).toHaveLength(1);
  });

  it('a torn tail: stop keeps earlier records, throw names file and offset', () => {
    const log = writeLog([pattern(100, 1), pattern(100, 2)], { recyclable: false });
    const cut = log.subarray(0, log.length - 10);
    const res = readLogRecords(cut, 'm', 0, 'stop');
    expect(res.end).toBe('torn');
    expect(res.records.map((r) => r.data)).toStrictEqual([pattern(100, 1)]);
    expect(res.tornOffset).toBe(107);
    expect(() => readLogRecords(cut, '/d/000004.log', 0, 'throw')).toThrow(
      /\/d\/000004\.log at offset 107: log: chunk length 100 runs past/,
    );
  });

  it('a flipped payload byte is a checksum mismatch; a record missing its last chunk is torn', () => {
    const log = writeLog([pattern(50000, 1)], { recyclable: true, logNum: 2 });
    const bad = new Uint8Array(log);
    bad[40000] = bad[40000]! ^ 1;
    let err: unknown;
    try {
      readLogRecords(bad, 'w.log', 2, 'throw');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PebbleCorruptionError);
    expect((err as PebbleCorruptionError).offset).toBe(32768);
    expect((err as Error).message).toMatch(/checksum mismatch/);
    const firstBlockOnly = log.subarray(0, 32768);
    const res = readLogRecords(firstBlockOnly, 'w.log', 2, 'stop');
    expect(res.end).toBe('torn');
    expect(res.records).toHaveLength(0);
    expect(res.tornDetail).toMatch(/no last chunk/);
  });

  it('a chunk of another log number inside a record is corruption', () => {
    const a = writeLog([pattern(50000, 1)], { recyclable: true, logNum: 2 });
    const b = writeLog([pattern(50000, 1)], { recyclable: true, logNum: 3 });
    const mixed = new Uint8Array(a);
    mixed.set(b.subarray(32768), 32768);
    expect(() => readLogRecords(mixed, 'w.log', 2, 'throw')).toThrow(/chunk of log number 3 inside a record of log 2/);
  });
});
