import process from 'node:process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';

/** The lock file: an SQLite database whose exclusive lock the holder keeps for its whole life. */
export const LOCK_FILE = 'parley.lock';
/** The holder's pid, for the message a second process prints. */
export const PID_FILE = 'parley.pid';

/** A data directory another process already holds. */
export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holderPid: number | undefined,
  ) {
    super(
      `data directory ${dir} is in use by another parley process${holderPid ? ` (pid ${holderPid})` : ''}: ` +
        'one data directory serves one server; stop the other process or use another node.data_dir',
    );
    this.name = 'DataDirLockedError';
  }
}

/** A held data-directory lock; `release()` lets the next process in. */
export interface DataDirLock {
  release(): void;
}

function readPid(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, PID_FILE), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the data directory's exclusive lock, before anything in it is read or
 * written. The lock is SQLite's own file lock on `parley.lock` (a POSIX record
 * lock): the kernel drops it when the holder exits, however it exits, so a
 * crash never leaves a stale lock behind. A second server — another process,
 * or a second start in this one — fails with `DataDirLockedError` naming the
 * holder's pid from `parley.pid`.
 */
export function lockDataDir(dir: string): DataDirLock {
  mkdirSync(dir, { recursive: true });
  const db = new SqliteDatabase(join(dir, LOCK_FILE));
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('begin exclusive');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new DataDirLockedError(dir, readPid(dir));
    throw new Error(`${join(dir, LOCK_FILE)}: ${(err as Error).message}`, { cause: err });
  }
  const pidFile = join(dir, PID_FILE);
  writeFileSync(pidFile, `${process.pid}\n`);
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      rmSync(pidFile, { force: true });
      db.exec('rollback');
      db.close();
    },
  };
}
