import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { digestFile, fileEquals, readAndDigest } from '../src/archive/file-digest.ts';

const dir = mkdtempSync(join(tmpdir(), 'file-digest-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('file digests', () => {
  it('agree between the streamed and the whole-file paths, below and above the kept size, lines counted or not', () => {
    const sizes = [0, 1, 10, (1 << 20) + 3, (9 << 20) + 17];
    const files = sizes.map((size, i) => {
      const data = Buffer.alloc(size);
      for (let j = 0; j < size; j++) data[j] = (j * 31 + i) % 97 === 0 ? 10 : 97 + (j % 26);
      const file = join(dir, `f${i}`);
      writeFileSync(file, data);
      const lines = data.filter((b) => b === 10).length;
      return { file, want: { sha256: createHash('sha256').update(data).digest('hex'), count: lines, bytes: size } };
    });
    const kept = files.map((f) => readAndDigest(f.file));
    for (const [i, k] of kept.entries()) {
      const { data, ...digest } = k;
      expect(digest).toEqual(files[i]!.want);
      // files up to 8 MiB come back with the bytes they were hashed over, larger ones are streamed
      if (files[i]!.want.bytes <= 8 << 20) expect(data?.equals(readFileSync(files[i]!.file))).toBe(true);
      else expect(data).toBeUndefined();
    }
    for (const f of files) {
      expect(digestFile(f.file)).toEqual(f.want);
      expect(digestFile(f.file, false)).toEqual({ ...f.want, count: 0 });
      const data = readFileSync(f.file);
      expect(fileEquals(f.file, data)).toBe(true);
      if (data.length > 0) {
        const changed = Buffer.from(data);
        changed[changed.length - 1] = changed[changed.length - 1]! ^ 1;
        expect(fileEquals(f.file, changed)).toBe(false);
        expect(fileEquals(f.file, data.subarray(0, data.length - 1))).toBe(false);
      }
      expect(fileEquals(f.file, Buffer.concat([data, Buffer.from('x')]))).toBe(false);
    }
  });
});
