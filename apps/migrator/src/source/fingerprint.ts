import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { digestFile } from '../archive/file-digest.ts';
import { hashOnWorkers } from '../v2/scan-pool.ts';

/** One file of a source tree: path relative to the tree root, size and SHA-256. */
export interface FileFingerprint {
  path: string;
  size: number;
  sha256: string;
}

/**
 * Every regular file under `root` (sorted), hashed: prepare records it and
 * export compares, so a source that changed after prepare is refused. The
 * scan workers hash it when they are running (in parallel, while the main
 * thread goes on with other work until it awaits the result); else it is
 * hashed here, before this returns its promise.
 */
export async function fingerprintTree(root: string): Promise<FileFingerprint[]> {
  const files: Array<{ full: string; size: number }> = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const st = statSync(full);
      if (st.isDirectory()) walk(full);
      else if (st.isFile()) files.push({ full, size: st.size });
    }
  };
  walk(root);
  const onWorkers = hashOnWorkers(files.map((f) => ({ path: f.full, size: f.size })));
  const sums = onWorkers ? await onWorkers : files.map((f) => digestFile(f.full, false).sha256);
  return files.map((f, i) => ({ path: relative(root, f.full), size: f.size, sha256: sums[i]! }));
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
