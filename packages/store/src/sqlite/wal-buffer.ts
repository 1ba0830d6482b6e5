/**
 * The WAL write buffer (`@parley/sqlite-walbuf`, a SQLite extension in C):
 * SQLite writes each WAL frame with two `pwrite` calls (its header, then the
 * page), so a commit of N dirty pages made 2N system calls before its fsync —
 * at 5k messages/s about 7 per message, the most frequent system call of the
 * process. On the writer thread the extension gathers a commit's frames and
 * writes them with one call just before the commit's fsync (README, "What an
 * append writes").
 *
 * Loaded once per process into SQLite (better-sqlite3's copy, shared by every
 * thread); it then is SQLite's default VFS, passing every call of every other
 * connection through unchanged. Only a thread that runs
 * `PRAGMA parley_wal_buffer = on` gathers its WAL writes.
 */
import { createRequire } from 'node:module';
import SqliteDatabase from 'better-sqlite3';

/** `store.sqlite_wal_buffer`: `auto` = on when the extension is built and commits fsync (`sync = full`). */
export type WalBufferMode = 'auto' | 'on' | 'off';

/** The pragma that turns gathering on for the calling thread (answers `on` or `off`). */
export const WAL_BUFFER_PRAGMA = 'parley_wal_buffer';
/** The pragma that reads the process's counts: `gathered=N flushes=N bytes=N`. */
export const WAL_BUFFER_STATS_PRAGMA = 'parley_wal_buffer_stats';

let loaded: { ok: true } | { ok: false; reason: string } | undefined;

/** Loads the extension into SQLite once per process; says why not when it cannot. */
export function loadWalBuffer(): { ok: true } | { ok: false; reason: string } {
  if (loaded) return loaded;
  let ext: { path: string | undefined; entryPoint: string; loadError: Error | undefined };
  try {
    ext = createRequire(import.meta.url)('@parley/sqlite-walbuf') as typeof ext;
  } catch (err) {
    return (loaded = { ok: false, reason: `@parley/sqlite-walbuf: ${(err as Error).message}` });
  }
  if (ext.path === undefined) return (loaded = { ok: false, reason: ext.loadError?.message ?? '@parley/sqlite-walbuf was not built' });
  const db = new SqliteDatabase(':memory:');
  try {
    // better-sqlite3 takes the entry point as a second argument; its types name only the path.
    (db as unknown as { loadExtension(path: string, entryPoint: string): void }).loadExtension(ext.path, ext.entryPoint);
    loaded = { ok: true };
  } catch (err) {
    loaded = { ok: false, reason: `@parley/sqlite-walbuf did not load: ${(err as Error).message}` };
  } finally {
    db.close();
  }
  return loaded;
}

/**
 * Whether the writer thread gathers its WAL writes: `off` never; `auto` when
 * the extension loads and `sync` is `full`; `on` the same, refused with the
 * reason otherwise. With `sync = normal` a commit has no fsync to write its
 * frames before, so the extension would fall back to SQLite's WAL index
 * barrier, where a failed write cannot be reported: refused.
 */
export function resolveWalBuffer(
  mode: WalBufferMode,
  sync: 'full' | 'normal',
  load: () => { ok: true } | { ok: false; reason: string } = loadWalBuffer,
): { on: boolean; reason: string } {
  if (mode === 'off') return { on: false, reason: 'store.sqlite_wal_buffer = off' };
  if (sync !== 'full') {
    if (mode === 'on')
      throw new RangeError(
        'store.sqlite_wal_buffer = on needs store.sync = full (a commit without fsync has no point to write its WAL frames at)',
      );
    return { on: false, reason: 'store.sync = normal' };
  }
  const l = load();
  if (l.ok) return { on: true, reason: 'extension loaded' };
  if (mode === 'on') throw new Error(`store.sqlite_wal_buffer = on, but the WAL buffer is unavailable: ${l.reason}`);
  return { on: false, reason: l.reason };
}

/** The process's counts so far (any connection to a file opened after the load answers them; an in-memory one does not). */
export function walBufferStats(db: SqliteDatabase.Database): { gathered: number; flushes: number; bytes: number } | undefined {
  const text = db.pragma(WAL_BUFFER_STATS_PRAGMA, { simple: true }) as string | undefined;
  if (typeof text !== 'string') return undefined;
  const m = /^gathered=(\d+) flushes=(\d+) bytes=(\d+)$/.exec(text);
  if (!m) return undefined;
  return { gathered: Number(m[1]), flushes: Number(m[2]), bytes: Number(m[3]) };
}
