import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NodeRegistry } from '../host/node-registry.ts';
import { NodeStore, type Secrets } from './node-store.ts';

/** Stands in for safeStorage: a reversible transform whose output never contains the plain text. */
const sealing: Secrets = {
  available: true,
  encrypt: (s) => Buffer.from(`sealed:${Buffer.from(s).toString('hex')}`),
  decrypt: (b) => Buffer.from(b.toString().replace(/^sealed:/, ''), 'hex').toString(),
};

describe('desktop node store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-node-store-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps nodes across restarts with tokens only encrypted', async () => {
    const file = join(dir, 'nodes.json');
    const store = new NodeStore(file, sealing);
    let saves: Promise<void> = Promise.resolve();
    const reg = new NodeRegistry(await store.load(), (entries) => {
      saves = store.save(entries);
    });
    const n = reg.add('http://127.0.0.1:5001', 'one');
    if ('code' in n) throw new Error(n.message);
    reg.setToken(n.id, 'plain-secret');
    await saves;
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('plain-secret');
    expect(await new NodeStore(file, sealing).load()).toEqual([
      { id: n.id, url: 'http://127.0.0.1:5001', name: 'one', token: 'plain-secret' },
    ]);
  });

  it('never writes a token when the system cannot encrypt it', async () => {
    const file = join(dir, 'plain.json');
    await new NodeStore(file, { ...sealing, available: false }).save([{ id: 'a', url: 'http://127.0.0.1:1', token: 'plain-secret' }]);
    expect(readFileSync(file, 'utf8')).not.toContain('plain-secret');
    expect(await new NodeStore(file, sealing).load()).toEqual([{ id: 'a', url: 'http://127.0.0.1:1' }]);
  });

  it('starts empty on a missing or damaged file', async () => {
    expect(await new NodeStore(join(dir, 'none.json'), sealing).load()).toEqual([]);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"nodes": [{"url": 5}]');
    expect(await new NodeStore(bad, sealing).load()).toEqual([]);
  });
});
