import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The business-DB directory of a v2 data dir. */
export function wkdbDir(dataDir: string): string {
  return join(dataDir, 'db', 'wukongimdb');
}

/**
 * The shard directories (`shard000`…) of a v2 data dir, in shard order, or a
 * reason when they are missing or not numbered 0..n-1.
 */
export function listShards(dataDir: string): { shards: string[]; problem?: string } {
  const dir = wkdbDir(dataDir);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return { shards: [], problem: `${dir} does not exist (not a v2 data dir)` };
  const names = readdirSync(dir)
    .filter((n) => /^shard\d{3}$/.test(n))
    .sort();
  for (let i = 0; i < names.length; i++) {
    if (names[i] !== `shard${String(i).padStart(3, '0')}`)
      return { shards: [], problem: `${dir}: shard directories are not numbered 000..${names.length - 1}` };
  }
  if (names.length === 0) return { shards: [], problem: `${dir} holds no shard directories` };
  return { shards: names.map((n) => join(dir, n)) };
}
