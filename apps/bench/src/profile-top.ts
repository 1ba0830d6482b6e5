/**
 * Top self-time functions of a V8 `.cpuprofile` (what `node --cpu-prof`
 * writes): `node --import tsx src/profile-top.ts FILE [N]`. Self time is the
 * sum of the sampling intervals whose leaf frame is the function, grouped by
 * function name and file:line, shown in ms and as a share of all samples.
 */
import process from 'node:process';
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** One row of the summary: function, location, self time in ms and its share of the profile. */
export interface TopRow {
  fn: string;
  where: string;
  selfMs: number;
  share: number;
}

/** The `n` functions with the most self time in `profile`. */
export function topSelf(profile: CpuProfile, n: number): TopRow[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    total += us;
    const f = byId.get(id)?.callFrame;
    const url = (f?.url ?? '').replace(/^file:\/\//, '').replace(/.*\/(node_modules|apps|packages)\//, '$1/');
    const key = `${f?.functionName || '(anonymous)'}\t${url ? `${url}:${(f?.lineNumber ?? 0) + 1}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + us);
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([key, us]) => {
      const [fn, where] = key.split('\t') as [string, string];
      return { fn, where, selfMs: us / 1000, share: us / total };
    });
}

if (process.argv[1]?.endsWith('profile-top.ts')) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: profile-top.ts FILE.cpuprofile [N]');
  const rows = topSelf(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(process.argv[3] ?? 25));
  for (const r of rows)
    console.log(`${(r.share * 100).toFixed(1).padStart(5)}%  ${r.selfMs.toFixed(0).padStart(6)} ms  ${r.fn}  ${r.where}`);
}
