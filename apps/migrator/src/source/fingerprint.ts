import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { FileFingerprint } from '@parley/shared';
import { hashFiles } from '../archive/hasher.ts';

export type { FileFingerprint };

/** A regular file of a source tree: full path and size. */
export interface TreeFile {
  full: string;
  size: number;
}

/** Every regular file under `root`, sorted by path. */
export function listTree(root: string): TreeFile[] {
  const files: TreeFile[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const st = statSync(full);
      if (st.isDirectory()) walk(full);
      else if (st.isFile()) files.push({ full, size: st.size });
    }
  };
  walk(root);
  return files;
}

/**
 * The files of a tree listed by `listTree`, hashed on the hashing thread
 * while the caller goes on until it awaits the result: prepare records the
 * fingerprint and export compares, so a source that changed after prepare is
 * refused.
 */
export async function hashTree(root: string, files: readonly TreeFile[]): Promise<FileFingerprint[]> {
  const sums = await hashFiles(files.map((f) => f.full));
  return files.map((f, i) => ({ path: relative(root, f.full), size: f.size, sha256: sums[i]! }));
}

/** `hashTree(root, listTree(root))`: the tree is listed before this returns. */
export function fingerprintTree(root: string): Promise<FileFingerprint[]> {
  try {
    return hashTree(root, listTree(root));
  } catch (err) {
    return Promise.reject(err as Error);
  }
}

/** One digest over a fingerprint list. */
export function treeDigest(files: readonly FileFingerprint[]): string {
  const h = createHash('sha256');
  for (const f of files) h.update(`${f.path}\0${f.size}\0${f.sha256}\n`);
  return h.digest('hex');
}

/** Paths that differ between two fingerprint lists (added, removed or changed). */
export function treeChanges(before: readonly FileFingerprint[], after: readonly FileFingerprint[]): string[] {
  const a = new Map(before.map((f) => [f.path, f]));
  const b = new Map(after.map((f) => [f.path, f]));
  const out: string[] = [];
  for (const [p, f] of a) {
    const g = b.get(p);
    if (!g) out.push(`${p} removed`);
    else if (g.sha256 !== f.sha256 || g.size !== f.size) out.push(`${p} changed`);
  }
  for (const p of b.keys()) if (!a.has(p)) out.push(`${p} added`);
  return out;
}
