import { createChannelRepository } from './channel.repository.ts';
import { createCmdBindingRepository } from './cmd-binding.repository.ts';
import { createMessageEventRepository } from './message-event.repository.ts';
import { sql } from 'kysely';
import { BUSY_TIMEOUT_MS, openSqlite, type Db, type OpenOptions } from './db.ts';
import { createDeviceRepository } from './device.repository.ts';
import { createMembershipRepository } from './membership.repository.ts';
import { createMessageRepository } from './message.repository.ts';
import { join } from 'node:path';
import { STORE_FILE } from './integrity.ts';
import { WriteHealth, type HealthLog } from './write-health.ts';

/** Every repository over one database connection. */
export interface Store {
  devices: ReturnType<typeof createDeviceRepository>;
  channels: ReturnType<typeof createChannelRepository>;
  memberships: ReturnType<typeof createMembershipRepository>;
  messages: ReturnType<typeof createMessageRepository>;
  cmdBindings: ReturnType<typeof createCmdBindingRepository>;
  events: ReturnType<typeof createMessageEventRepository>;
  /** Cheap round trip proving the connection works (for readiness). */
  ping(): Promise<void>;
  /**
   * Proves the store can commit: takes the write lock every time (waiting at
   * most `waitMs`, so readiness answers quickly while another process holds
   * it) and, at most once per second or on every call while writes are
   * failing, also commits a one-row write (a full disk or a read-only file
   * only shows when something is written). Rejects with the cause.
   */
  probeWrite(waitMs: number): Promise<void>;
  /** Whether writes currently fail, and why (logged once per kind). */
  health: WriteHealth;
  close(): Promise<void>;
}

/** Longest a successful write probe is reused, ms. */
const PROBE_REUSE_MS = 1000;

function createStore(db: Db, health: WriteHealth): Store {
  let lastProbeOk = 0;
  return {
    health,
    devices: createDeviceRepository(db),
    channels: createChannelRepository(db),
    memberships: createMembershipRepository(db),
    messages: createMessageRepository(db),
    cmdBindings: createCmdBindingRepository(db),
    events: createMessageEventRepository(db),
    async ping() {
      await db.selectFrom('meta').select('key').limit(1).execute();
    },
    async probeWrite(waitMs: number) {
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
    },
    close: () => db.destroy(),
  };
}

const SILENT: HealthLog = { error() {}, warn() {}, info() {} };

/** The embedded store: `<dataDir>/parley.db`; `log` receives its write-failure reports. */
export async function openEmbeddedStore(options: Omit<OpenOptions, 'health'> & { log?: HealthLog }): Promise<Store> {
  const health = new WriteHealth(join(options.dataDir, STORE_FILE), options.log ?? SILENT);
  return createStore(await openSqlite({ ...options, health }), health);
}
