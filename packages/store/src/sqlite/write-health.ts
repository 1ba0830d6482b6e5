import { openSync, closeSync, statfsSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';

/** Why store writes fail, as operators act on it. */
export type StoreFailureKind = 'disk_full' | 'read_only' | 'io_error' | 'corrupt' | 'busy' | 'other';

/** The kind of a storage failure, or undefined for errors that are not the store's (constraints, bad input). */
export function failureKind(err: unknown): StoreFailureKind | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return undefined;
  if (code === 'SQLITE_FULL') return 'disk_full';
  if (code.startsWith('SQLITE_READONLY')) return 'read_only';
  if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN')) return 'io_error';
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return 'corrupt';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
  if (code.startsWith('SQLITE_CONSTRAINT') || code === 'SQLITE_ERROR' || code === 'SQLITE_RANGE' || code === 'SQLITE_MISMATCH')
    return undefined;
  return 'other';
}

/** The logger calls the tracker makes (a pino logger fits). */
export interface HealthLog {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * What the operating system says about the store's files when SQLite only
 * says "disk I/O error": whether each can be opened for writing (an immutable
 * or read-only file, a read-only mount) and the free space on the volume.
 */
export function diagnoseStoreFiles(dbFile: string): string {
  const facts: string[] = [];
  for (const file of [dbFile, `${dbFile}-wal`]) {
    if (!existsSync(file)) continue;
    try {
      closeSync(openSync(file, 'r+'));
    } catch (err) {
      facts.push(`${file}: ${(err as Error).message}`);
    }
  }
  try {
    const fs = statfsSync(dirname(dbFile));
    facts.push(`${fs.bavail * fs.bsize} bytes free on the volume of ${dirname(dbFile)}`);
  } catch (err) {
    facts.push(`${dirname(dbFile)}: ${(err as Error).message}`);
  }
  return facts.join('; ');
}

/** How often a store that keeps failing is reported again, ms. */
const REPEAT_MS = 60_000;

/**
 * Tracks whether store writes succeed. The first failure of each kind is
 * logged with SQLite's code and message and the files' state (the real cause);
 * later ones are only counted, and the counts are logged every minute while
 * writes keep failing and once more when they succeed again. Readiness reads
 * `failing` (not ready while set).
 */
export class WriteHealth {
  /** Set while writes fail: since when, and the latest failure. */
  failing: { since: number; kind: StoreFailureKind; code: string; message: string } | undefined;
  private readonly counts = new Map<StoreFailureKind, number>();
  private lastReport = 0;

  /**
   * `dbFile` names the store in reports (a PostgreSQL store passes its URL
   * without password); `classify` and `diagnose` default to SQLite's codes and
   * the files' state.
   */
  constructor(
    private readonly dbFile: string,
    private readonly log: HealthLog,
    private readonly classify: (err: unknown) => StoreFailureKind | undefined = failureKind,
    private readonly diagnose: (dbFile: string) => string = diagnoseStoreFiles,
  ) {}

  /** Records a failed statement; errors that are not the store's are ignored. */
  failed(err: unknown): void {
    const kind = this.classify(err);
    if (!kind) return;
    const e = err as Error & { code?: string };
    const now = Date.now();
    const seen = this.counts.get(kind) ?? 0;
    this.counts.set(kind, seen + 1);
    this.failing = { since: this.failing?.since ?? now, kind, code: e.code ?? 'none', message: e.message };
    if (seen === 0) {
      this.lastReport = now;
      this.log.error(
        { kind, code: e.code, error: e.message, cause: this.diagnose(this.dbFile), path: this.dbFile },
        'store writes failing',
      );
    } else if (now - this.lastReport >= REPEAT_MS) {
      this.lastReport = now;
      this.log.warn(
        { failures: Object.fromEntries(this.counts), since: new Date(this.failing.since).toISOString(), path: this.dbFile },
        'store writes still failing',
      );
    }
  }

  /** Records a committed write; ends a failing period. */
  succeeded(): void {
    if (!this.failing) return;
    this.log.info(
      { failures: Object.fromEntries(this.counts), failing_ms: Date.now() - this.failing.since, path: this.dbFile },
      'store writes succeed again',
    );
    this.failing = undefined;
    this.counts.clear();
  }

  /** The readiness text while failing: kind, SQLite code and message. */
  describe(): string | undefined {
    const f = this.failing;
    return f ? `store writes failing (${f.kind}: ${f.code} ${f.message})` : undefined;
  }
}
