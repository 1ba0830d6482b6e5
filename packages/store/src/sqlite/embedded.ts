import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { isPatched } from '@parley/sqlite-build';
import { sql } from 'kysely';
import type { Db } from '../db.ts';
import { createRepositories } from '../repositories/index.ts';
import { IDEMPOTENCY_LOOKUP_SQL } from './writer-protocol.ts';
import { idemHash } from './idem-hash.ts';
import type { Store } from '../store.ts';
import { STORE_FILE } from './integrity.ts';
import type SqliteDatabase from 'better-sqlite3';
import type { IdempotencyKey, IdempotentHit } from '../repositories/message.repository.ts';
import { BUSY_TIMEOUT_MS, openMemorySqliteConnection, openSqliteConnection, type OpenOptions } from './open.ts';
import { resolveWalBuffer, type WalBufferMode } from './wal-buffer.ts';
import { WriteHealth, type HealthLog } from './write-health.ts';
import { SqliteWriter, WAL_SIZE_LIMIT_BYTES } from './writer.ts';

/** Longest a successful write probe is reused, ms. */
const PROBE_REUSE_MS = 1000;

/**
 * SQLite's write probe: `begin immediate` under a short busy timeout, and now
 * and then a committed one-row write. A batch the writer thread committed
 * within `PROBE_REUSE_MS` already proves the store can commit: then the probe
 * does nothing, instead of waiting on this connection (and blocking the event
 * loop) for the writer's own lock, which under load it would on every call.
 */
function writeProbe(db: Db, health: WriteHealth, writer?: SqliteWriter): (waitMs: number) => Promise<void> {
  let lastProbeOk = 0;
  return async (waitMs) => {
    if (writer && health.failing === undefined && performance.now() - writer.lastCommitAt < PROBE_REUSE_MS) return;
    const commit = health.failing !== undefined || performance.now() - lastProbeOk >= PROBE_REUSE_MS;
    // One connection checkout: no other query runs between the pragmas, so none sees the short wait.
    await db.connection().execute(async (c) => {
      await sql.raw(`pragma busy_timeout = ${Math.max(0, Math.floor(waitMs))}`).execute(c);
      try {
        await sql.raw('begin immediate').execute(c);
        if (!commit) {
          await sql.raw('rollback').execute(c);
          return;
        }
        try {
          await sql`insert into meta (key, value) values ('write_probe', ${String(Date.now())}) on conflict (key) do update set value = excluded.value`.execute(
            c,
          );
          await sql.raw('commit').execute(c);
        } catch (err) {
          await sql.raw('rollback').execute(c);
          throw err;
        }
      } finally {
        await sql.raw(`pragma busy_timeout = ${BUSY_TIMEOUT_MS}`).execute(c);
      }
    });
    if (commit) lastProbeOk = performance.now();
  };
}

const SILENT: HealthLog = { error() {}, warn() {}, info() {} };

/**
 * The embedded store: `<dataDir>/parley.db`; `log` receives its write-failure
 * reports. Messages are appended by a writer thread (`writer.ts`) and the WAL
 * is checkpointed by another, so neither a commit's fsync nor a checkpoint
 * runs on the event loop; this connection keeps the reads and the rare other
 * writes.
 */
export async function openEmbeddedStore(
  options: Omit<OpenOptions, 'health' | 'readOnly'> & {
    log?: HealthLog;
    /**
     * How long committed latest-send marks wait in `pending_marks` before the writer thread
     * applies them to `memberships`, ms (default 1000; `writer.ts`). Reads see them at once.
     */
    markApplyMs?: number;
    /** Whether the writer thread gathers each commit's WAL frames into one write (`wal-buffer.ts`; default `auto`). */
    walBuffer?: WalBufferMode;
  },
): Promise<Store> {
  const file = join(options.dataDir, STORE_FILE);
  const health = new WriteHealth(file, options.log ?? SILENT);
  // Before any connection opens: the extension becomes SQLite's default VFS.
  const walBuffer = resolveWalBuffer(options.walBuffer ?? 'auto', options.sync);
  const { db, raw } = await openSqliteConnection({ ...options, health });
  let writer: SqliteWriter;
  try {
    await sql.raw('pragma wal_autocheckpoint = 0').execute(db);
    // This connection's rare writes may restart the WAL too: the file is then cut back as the writer's is.
    await sql.raw(`pragma journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`).execute(db);
    writer = await SqliteWriter.start(file, options.sync, health, options.markApplyMs, walBuffer.on);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return { ...storeOn(db, raw, health, writer), walBuffer, sqlitePatched: isPatched(raw), writerTimings: writer.timings };
}

/**
 * The send path's idempotency look-up as one prepared statement run per key
 * (each an index seek on `messages_by_idem_hash`, then the four columns
 * compared), instead of a query built and compiled per batch.
 */
function idempotencyLookup(raw: SqliteDatabase.Database) {
  const stmt = raw.prepare<[bigint, string, number, string, string], { id_text: string; message_seq: number; payload: Uint8Array }>(
    IDEMPOTENCY_LOOKUP_SQL,
  );
  return async (keys: readonly IdempotencyKey[]): Promise<IdempotentHit[]> => {
    const hits: IdempotentHit[] = [];
    for (const k of keys) {
      if (k.clientMsgNo === '') continue;
      const r = stmt.get(
        idemHash(k.channelId, k.channelType, k.fromUid, k.clientMsgNo),
        k.channelId,
        k.channelType,
        k.fromUid,
        k.clientMsgNo,
      );
      if (!r) continue;
      hits.push({
        channelId: k.channelId,
        channelType: k.channelType,
        fromUid: k.fromUid,
        clientMsgNo: k.clientMsgNo,
        messageId: BigInt(r.id_text),
        messageSeq: Number(r.message_seq),
        payload: r.payload,
      });
    }
    return hits;
  };
}

/** A store in memory with the current schema, for service and route tests: the same repositories, no file. */
export async function openMemoryStore(): Promise<Store> {
  const { db, raw } = await openMemorySqliteConnection();
  return storeOn(db, raw, new WriteHealth(':memory:', SILENT));
}

function storeOn(db: Db, raw: SqliteDatabase.Database, health: WriteHealth, writer?: SqliteWriter): Store {
  const repositories = createRepositories(db);
  repositories.messages.findByIdempotencyKeys = idempotencyLookup(raw);
  if (writer) {
    // Unfenced appends (every single-node send) go to the writer thread. A fenced
    // append (slot leases are a cluster feature, and cluster mode runs on PostgreSQL)
    // keeps the in-transaction lease check on this connection; SQLite serialises the
    // two writers with its own lock.
    const fenced = repositories.messages.appendBatch;
    repositories.messages.appendBatch = (rows, marks, fence, members) =>
      fence === undefined || (Array.isArray(fence) && fence.length === 0)
        ? writer.appendBatch(rows, marks, members)
        : fenced(rows, marks, fence, members);
    repositories.messages.appendChecked = (rows, marks, members) => writer.appendBatchChecked(rows, marks, members);
    // Stream events too: their commits are the writer's (off the event loop, shared by the events of
    // one turn), and this connection never writes while the writer does.
    repositories.events.append = (e) => writer.appendEvent(e);
    // The writer thread applies committed latest-send marks to `memberships` up to a second
    // later: the reads of memberships add the ones it has not applied yet.
    const { get, pageByUid } = repositories.memberships;
    repositories.memberships.get = async (channelId, channelType, uid) =>
      (
        await writer.readWithMarks(uid, async () => {
          const row = await get(channelId, channelType, uid);
          return row ? [row] : [];
        })
      )[0];
    repositories.memberships.pageByUid = (uid, after, limit) => writer.readWithMarks(uid, () => pageByUid(uid, after, limit));
  }
  return {
    ...repositories,
    health,
    async ping() {
      await db.selectFrom('meta').select('key').limit(1).execute();
    },
    probeWrite: writeProbe(db, health, writer),
    async close() {
      await writer?.close();
      await db.destroy();
    },
  };
}
