import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readBlock } from '../src/block.ts';
import { maskedCrc32c } from '../src/crc32c.ts';
import { PebbleCorruptionError } from '../src/errors.ts';
import { TableFile } from '../src/table-file.ts';

const root = mkdtempSync(join(tmpdir(), 'pebble-block-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Writes `pad` filler bytes, then `body` + a trailer (compression type, valid masked CRC32C); returns a reader and the block's handle. */
function blockFile(
  name: string,
  body: Uint8Array,
  type: number,
  pad = 16,
): { file: TableFile; handle: { offset: number; length: number } } {
  const buf = new Uint8Array(pad + body.length + 5);
  buf.fill(0xee, 0, pad);
  buf.set(body, pad);
  buf[pad + body.length] = type;
  const crc = maskedCrc32c(buf, pad, pad + body.length + 1);
  new DataView(buf.buffer).setUint32(pad + body.length + 1, crc, true);
  const path = join(root, name);
  writeFileSync(path, buf);
  return { file: new TableFile(path), handle: { offset: pad, length: body.length } };
}

function readErr(name: string, body: number[]): PebbleCorruptionError {
  const { file, handle } = blockFile(name, Uint8Array.from(body), 1);
  try {
    readBlock(file, handle, 'data');
  } catch (err) {
    expect(err).toBeInstanceOf(PebbleCorruptionError);
    const e = err as PebbleCorruptionError;
    expect(e.file).toBe(join(root, name));
    expect(e.offset).toBe(handle.offset);
    return e;
  } finally {
    file.close();
  }
  throw new Error(`${name}: expected a corruption error`);
}

describe('blocks', () => {
  it('decodes a Snappy block (literal and back-reference copies)', () => {
    // length 12; literal "abcd"; copy-1 (len 8, offset 4) = "abcdabcd"
    const { file, handle } = blockFile('ok.sst', Uint8Array.from([12, 3 << 2, 0x61, 0x62, 0x63, 0x64, ((8 - 4) << 2) | 1, 4]), 1);
    expect(Buffer.from(readBlock(file, handle, 'data')).toString()).toBe('abcdabcdabcd');
    file.close();
  });

  it('Snappy bodies that cannot be decoded fail as corruption naming the file and block, even behind a valid checksum', () => {
    expect(readErr('header.sst', [0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]).message).toMatch(/invalid length header/);
    expect(readErr('claims-too-much.sst', [0x80, 0x80, 0x40, 0x00, 0x61]).message).toMatch(/invalid length header/);
    expect(readErr('short.sst', [10, 3 << 2, 0x61, 0x62, 0x63, 0x64]).message).toMatch(/cannot decompress data block/);
    expect(readErr('offset.sst', [12, 3 << 2, 0x61, 0x62, 0x63, 0x64, ((8 - 4) << 2) | 1, 9]).message).toMatch(
      /cannot decompress data block/,
    );
    expect(readErr('literal-past-end.sst', [4, 60 << 2, 200, 0x61]).message).toMatch(/cannot decompress data block/);
  });

  it('a checksum mismatch is reported before any decompression', () => {
    const { file, handle } = blockFile('crc.sst', Uint8Array.from([12, 3 << 2, 0x61, 0x62, 0x63, 0x64, ((8 - 4) << 2) | 1, 4]), 1);
    file.close();
    const path = join(root, 'crc.sst');
    const bytes = readFileSync(path);
    bytes[handle.offset + 3]! ^= 1;
    writeFileSync(path, bytes);
    const f = new TableFile(path);
    expect(() => readBlock(f, handle, 'data')).toThrow(/checksum mismatch in data block 16\/8/);
    f.close();
  });
});
