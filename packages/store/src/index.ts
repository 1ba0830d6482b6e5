/**
 * The Parley store: schema, migrations and repositories, used by the server
 * and by `parleyctl`. Repositories are dialect-neutral (kysely over a `Db`);
 * everything particular to SQLite lives under `sqlite/`.
 */
export type { Db } from './db.ts';
export type * from './schema.ts';
export type { Store } from './store.ts';
export { createRepositories, type Repositories } from './repositories/index.ts';
export type { ChannelFlags, ChannelRow, ChannelRepository, MemberListName } from './repositories/channel.repository.ts';
export type { CmdBinding, CmdBindingRepository } from './repositories/cmd-binding.repository.ts';
export type { ConnectRecord, DeviceRecord, DeviceRepository } from './repositories/device.repository.ts';
export type {
  DirectoryKey,
  EnsuredMember,
  LastSendMark,
  MembershipRepository,
  MembershipRow,
} from './repositories/membership.repository.ts';
export type { MessageEvent, MessageEventRepository } from './repositories/message-event.repository.ts';
export type { IdempotencyKey, IdempotentHit, MessageRepository, StoredMessage } from './repositories/message.repository.ts';
export type { SlotLease, SlotLeaseRepository } from './repositories/slot-lease.repository.ts';
export type { ClusterNode, ClusterNodeRepository } from './repositories/cluster-node.repository.ts';
export { isUniqueViolation, StaleEpochError, type AppendFence } from './errors.ts';
export type { Dialect } from './dialect.ts';
export { tokenDigest } from './token-digest.ts';
export { openEmbeddedStore, openMemoryStore } from './sqlite/embedded.ts';
export { loadWalBuffer, resolveWalBuffer, walBufferStats, type WalBufferMode } from './sqlite/wal-buffer.ts';
export { BUSY_TIMEOUT_MS, openMemorySqlite, openSqlite, type OpenOptions } from './sqlite/open.ts';
export {
  assertStorePresent,
  checkStoreFile,
  StoreIntegrityError,
  storeMarker,
  STORE_FILE,
  type StoreCheckReport,
} from './sqlite/integrity.ts';
export { DataDirLockedError, lockDataDir, LOCK_FILE, PID_FILE, type DataDirLock } from './sqlite/dir-lock.ts';
export { diagnoseStoreFiles, failureKind, WriteHealth, type HealthLog, type StoreFailureKind } from './sqlite/write-health.ts';
export {
  WriterTimings,
  WRITER_PAUSE_REASONS,
  type WriterCommitListener,
  type WriterPauseListener,
  type WriterPauseReason,
} from './sqlite/writer-timings.ts';
export { contentDigest, type ContentDigest } from './content-digest.ts';
export { CONTENT_TABLES, type ContentTable } from './tables.ts';
export type { ImportRepository } from './repositories/import.repository.ts';
export type { SnapshotRepository } from './repositories/snapshot.repository.ts';
export { openImportTarget, openStoreReader, type ImportTarget, type StoreReader } from './sqlite/migration-target.ts';
export { parsePostgresUrl, PostgresUrlError, type PostgresLocation } from './postgres/url.ts';
export { DEFAULT_POOL_SIZE, openPostgres, storeLabel, type PostgresOpenOptions } from './postgres/open.ts';
export { openPostgresStore, type PostgresStore } from './postgres/store.ts';
export { lockNode, NodeLockedError, type NodeLock } from './postgres/node-lock.ts';
export { postgresFailureKind } from './postgres/health.ts';
export {
  openPostgresImportTarget,
  openPostgresStoreReader,
  postgresSchemaTables,
  readPostgresImportMarks,
  type PostgresImportMarks,
  type PostgresImportTarget,
} from './postgres/migration-target.ts';
export { checkPostgresStore } from './postgres/check.ts';
