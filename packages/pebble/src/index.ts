/**
 * @parley/pebble — a pure TypeScript, read-only reader of Pebble v1 databases
 * (format major version <= 14, bytewise comparer).
 */
export { openPebble, type KeyRange, type OpenOptions, type PebbleDb, type PebbleStats } from './db.ts';
export type { Entry } from './merge.ts';
export { PebbleCorruptionError, PebbleError, PebbleUnsupportedError } from './errors.ts';
export { MAX_FORMAT_MAJOR_VERSION, discover, parseOptions } from './discovery.ts';
export { readManifest, type ManifestState } from './manifest.ts';
export { readLogRecords, type LogReadResult } from './log-reader.ts';
export { decodeBatch, PointTable, type Tombstone } from './batch.ts';
export { Sstable, type TableFormat } from './sstable.ts';
export { TableIter } from './table-iter.ts';
export { crc32c, maskedCrc32c } from './crc32c.ts';
