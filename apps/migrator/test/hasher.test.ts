import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashFiles } from '../src/archive/hasher.ts';

const dir = mkdtempSync(join(tmpdir(), 'hasher-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Files of several sizes (empty, one byte, across the 1 MiB read size) and their SHA-256. */
function someFiles(tag: string): { files: string[]; want: string[] } {
  const sizes = [0, 1, 4096, (1 << 20) - 1, (1 << 20) + 5, (3 << 20) + 11];
  const files: string[] = [];
  const want: string[] = [];
  for (const [i, size] of sizes.entries()) {
    const data = Buffer.alloc(size);
    for (let j = 0; j < size; j++) data[j] = (j * 131 + i * 7 + tag.length) & 0xff;
    const file = join(dir, `${tag}-${i}`);
    writeFileSync(file, data);
    files.push(file);
    want.push(createHash('sha256').update(data).digest('hex'));
  }
  return { files, want };
}

describe('the hashing thread', () => {
  it('gives each file its SHA-256, in order, for jobs in flight together', async () => {
    const a = someFiles('a');
    const b = someFiles('bb');
    const [ga, gb, gEmpty] = await Promise.all([hashFiles(a.files), hashFiles(b.files), hashFiles([])]);
    expect(ga).toEqual(a.want);
    expect(gb).toEqual(b.want);
    expect(gEmpty).toEqual([]);
  });

  it('rejects a job naming the file it cannot read, and goes on serving the next one', async () => {
    const ok = someFiles('ok');
    const missing = join(dir, 'no-such-file');
    await expect(hashFiles([ok.files[0]!, missing])).rejects.toThrow(/no-such-file/);
    expect(await hashFiles(ok.files)).toEqual(ok.want);
  });
});
