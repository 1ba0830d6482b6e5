import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { STORE_FILE } from './sqlite/integrity.ts';

/**
 * Test support (`@parley/store/testing`): what another process does to a
 * store, done on purpose so tests can show how the server takes it.
 */

/**
 * Takes the write lock of `<dataDir>/parley.db` from a second, real SQLite
 * connection, as a backup tool or an operator's shell would, until `release`.
 */
export function holdWriteLock(dataDir: string): { release(): void } {
  const other = new SqliteDatabase(join(dataDir, STORE_FILE));
  other.exec('begin immediate');
  return {
    release() {
      other.exec('rollback');
      other.close();
    },
  };
}
