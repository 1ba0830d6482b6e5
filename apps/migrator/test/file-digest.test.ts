import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { digestFile } from '../src/archive/file-digest.ts';
import { digestFiles } from '../src/archive/hasher.ts';

const dir = mkdtempSync(join(tmpdir(), 'file-digest-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('file digests', () => {
  it('SHA-256, size and line count, here and on the hashing thread, across the 1 MiB read size, lines counted or not', async () => {
    const sizes = [0, 1, 10, (1 << 20) - 1, 1 << 20, (1 << 20) + 3, (3 << 20) + 17];
    const files = sizes.map((size, i) => {
      const data = Buffer.alloc(size);
      for (let j = 0; j < size; j++) data[j] = (j * 31 + i) % 97 === 0 ? 10 : 97 + (j % 26);
      // a newline as the last byte of a read, and as the first byte of the next one
      if (size > 1 << 20) data[(1 << 20) - 1] = data[1 << 20] = 10;
      const file = join(dir, `f${i}`);
      writeFileSync(file, data);
      const lines = data.filter((b) => b === 10).length;
      return { file, want: { sha256: createHash('sha256').update(data).digest('hex'), count: lines, bytes: size } };
    });
    for (const f of files) {
      expect(digestFile(f.file)).toEqual(f.want);
      expect(digestFile(f.file, false)).toEqual({ ...f.want, count: 0 });
    }
    const paths = files.map((f) => f.file);
    expect(await digestFiles(paths, true)).toEqual(files.map((f) => f.want));
    expect(await digestFiles(paths, false)).toEqual(files.map((f) => ({ ...f.want, count: 0 })));
  });
});
