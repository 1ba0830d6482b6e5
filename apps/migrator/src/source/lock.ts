import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, read, statSync } from 'node:fs';
import { promisify } from 'node:util';

const readAsync = promisify(read);
/** Read size for /proc/locks: the first read (the one that waits) takes the whole table on all but very busy hosts. */
const TABLE_CHUNK = 1 << 18;

/** The kernel's table of held locks (Linux), being read; `lines` is absent elsewhere. */
export interface LockTable {
  lines?: Promise<string[]>;
}

/**
 * Starts reading /proc/locks, where Linux lists every held lock by device and
 * inode. Reading it waits for an RCU grace period (milliseconds), so a stage
 * starts it first and matches its lock files later. The file is opened here
 * and read in large reads on the libuv thread pool: the first one, which
 * waits, runs to its end however busy the main thread is meanwhile.
 */
export function readLockTable(): LockTable {
  if (!existsSync('/proc/locks')) return {};
  const lines = readWhole('/proc/locks').then((text) => text.split('\n'));
  lines.catch(() => undefined); // awaited by lockHolders; until then a failure is not unhandled
  return { lines };
}

async function readWhole(path: string): Promise<string> {
  const fd = openSync(path, 'r');
  try {
    const chunks: Buffer[] = [];
    for (;;) {
      const chunk = Buffer.allocUnsafe(TABLE_CHUNK);
      const { bytesRead } = await readAsync(fd, chunk, 0, TABLE_CHUNK, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * The processes holding the Pebble `LOCK` files of database directories (a
 * running v2 node), by lock file; files nobody holds are absent. Pebble takes
 * a POSIX record lock, seen in `table` without taking it. Elsewhere (macOS)
 * any process having the file open counts.
 */
export async function lockHolders(lockFiles: readonly string[], table: LockTable): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const present = lockFiles.filter((f) => existsSync(f));
  if (table.lines) {
    const lines = await table.lines;
    for (const file of present) {
      const holder = procLocksHolder(file, lines);
      if (holder) out.set(file, holder);
    }
    return out;
  }
  for (const file of present) {
    try {
      const pids = execFileSync('lsof', ['-t', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      if (pids !== '') out.set(file, `process ${pids.split('\n')[0]}`);
    } catch {
      // lsof exits non-zero when no process has the file open
    }
  }
  return out;
}

function procLocksHolder(lockFile: string, lines: readonly string[]): string | undefined {
  const st = statSync(lockFile);
  const major = (st.dev >> 8) & 0xfff;
  const minor = (st.dev & 0xff) | ((st.dev >> 12) & 0xfff00);
  for (const line of lines) {
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
