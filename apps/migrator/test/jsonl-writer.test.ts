import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { digestFile } from '../src/archive/file-digest.ts';
import { JsonlWriter, readJsonl } from '../src/archive/jsonl.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempFile(): string {
  const d = mkdtempSync(join(tmpdir(), 'jsonl-test-'));
  dirs.push(d);
  return join(d, 'records.jsonl');
}

describe('JsonlWriter', () => {
  it('writes records and assembled lines in order, owner-only, with their digest, count and size', async () => {
    const file = tempFile();
    const w = new JsonlWriter(file);
    const big = 'x'.repeat(1 << 20) + '群';
    const expected: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const rec = { i, s: i % 7 === 0 ? '群聊 😀 "q"' : 'plain', big: i === 1500 ? big : undefined };
      w.write(rec);
      expected.push(JSON.stringify(rec));
      if (i % 100 === 0) {
        w.text(`{"part":${i}`);
        w.bytes(Buffer.from(`,"bytes":"${'b'.repeat(i * 10)}"}\n`));
        w.endLine();
        expected.push(`{"part":${i},"bytes":"${'b'.repeat(i * 10)}"}`);
      }
    }
    w.bytes(Buffer.from(`{"huge":"${'h'.repeat((1 << 20) + 5)}"}\n`));
    w.endLine();
    expected.push(`{"huge":"${'h'.repeat((1 << 20) + 5)}"}`);
    const digest = await w.close();
    const content = Buffer.from(`${expected.join('\n')}\n`, 'utf8');
    expect(readFileSync(file).equals(content)).toBe(true);
    expect(digest).toEqual({ sha256: createHash('sha256').update(content).digest('hex'), count: expected.length, bytes: content.length });
    expect(digestFile(file)).toEqual(digest);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect([...readJsonl(file)].length).toBe(expected.length);
  });

  it('never overwrites a file', async () => {
    const file = tempFile();
    await new JsonlWriter(file).close();
    expect(() => new JsonlWriter(file)).toThrow(/EEXIST/);
  });
});
