import { sql } from 'kysely';
import { contentDigest, type ContentDigest } from '../content-digest.ts';
import { createRepositories, type Repositories } from '../repositories/index.ts';
import { createImportRepository, type ImportRepository } from '../repositories/import.repository.ts';
import { createSnapshotRepository, type SnapshotRepository } from '../repositories/snapshot.repository.ts';
import { openSqlite } from './open.ts';

/** A new store being filled by `parleyctl migrate import`. */
export interface ImportTarget {
  /** Runs `work` in one transaction: all of its rows are written, or none. */
  transaction(work: (rows: ImportRepository) => Promise<void>): Promise<void>;
  contentDigest(): Promise<ContentDigest>;
  /**
   * Leaves the store as one self-contained file (the write-ahead log folded in
   * and switched off, so read-only openers leave no `-wal`/`-shm` files
   * behind), then returns its fingerprint. The target stays open until `close`.
   */
  seal(): Promise<ContentDigest>;
  close(): Promise<void>;
}

/** Creates the store in `dataDir` (schema from the store's own migrations), ready for bulk import. */
export async function openImportTarget(dataDir: string): Promise<ImportTarget> {
  const db = await openSqlite({ dataDir, sync: 'normal' });
  return {
    transaction: (work) => db.transaction().execute((trx) => work(createImportRepository(trx, 'sqlite'))),
    contentDigest: () => contentDigest(db),
    async seal() {
      await sql.raw('pragma wal_checkpoint(TRUNCATE)').execute(db);
      await sql.raw('pragma journal_mode = DELETE').execute(db);
      return contentDigest(db);
    },
    close: () => db.destroy(),
  };
}

/** An existing store opened for reading only: the migrator's verification and re-import checks. */
export interface StoreReader {
  snapshot: SnapshotRepository;
  /** The server's repositories over the same read-only connection (their writes fail). */
  repositories: Repositories;
  contentDigest(): Promise<ContentDigest>;
  close(): Promise<void>;
}

/** Opens `<dataDir>/parley.db` read-only; it must exist with the current schema. */
export async function openStoreReader(dataDir: string): Promise<StoreReader> {
  const db = await openSqlite({ dataDir, sync: 'normal', readOnly: true });
  return {
    snapshot: createSnapshotRepository(db),
    repositories: createRepositories(db),
    contentDigest: () => contentDigest(db),
    close: () => db.destroy(),
  };
}
