import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';

/**
 * Whether another process holds the Pebble `LOCK` file of a database
 * directory (a running v2 node). Pebble takes a POSIX record lock; Linux lists
 * every held lock in /proc/locks by device and inode, so a lock is seen
 * without taking it. Elsewhere (macOS) any process having the file open counts.
 */
export function lockHolder(lockFile: string): string | undefined {
  if (!existsSync(lockFile)) return undefined;
  const st = statSync(lockFile);
  if (existsSync('/proc/locks')) {
    const major = (st.dev >> 8) & 0xfff;
    const minor = (st.dev & 0xff) | ((st.dev >> 12) & 0xfff00);
    for (const line of readFileSync('/proc/locks', 'utf8').split('\n')) {
      if (!line.includes(`:${st.ino} `)) continue;
      const f = line.trim().split(/\s+/);
      // "1: POSIX ADVISORY WRITE <pid> <maj>:<min>:<inode> <start> <end>"; blocked waiters have "->" inserted
      const off = f[1] === '->' ? 1 : 0;
      const id = f[5 + off];
      if (!id) continue;
      const [ma, mi, ino] = id.split(':');
      if (Number(ino) !== st.ino) continue;
      if (parseInt(ma ?? '', 16) === major && parseInt(mi ?? '', 16) === minor) return `process ${f[4 + off]}`;
    }
    return undefined;
  }
  try {
    const out = execFileSync('lsof', ['-t', lockFile], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return out === '' ? undefined : `process ${out.split('\n')[0]}`;
  } catch {
    return undefined;
  }
}
