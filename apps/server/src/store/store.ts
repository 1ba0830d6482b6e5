import { createChannelRepository } from './channel.repository.ts';
import { createCmdBindingRepository } from './cmd-binding.repository.ts';
import { createMessageEventRepository } from './message-event.repository.ts';
import { sql } from 'kysely';
import { BUSY_TIMEOUT_MS, openSqlite, type Db, type OpenOptions } from './db.ts';
import { createDeviceRepository } from './device.repository.ts';
import { createMembershipRepository } from './membership.repository.ts';
import { createMessageRepository } from './message.repository.ts';

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
   * Takes the database write lock and releases it at once, writing nothing:
   * proves the store can commit (no other connection holds the lock, the file
   * is writable). Waits at most `waitMs` for the lock, so readiness answers
   * quickly even while another process blocks the store.
   */
  probeWrite(waitMs: number): Promise<void>;
  close(): Promise<void>;
}

function createStore(db: Db): Store {
  return {
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
      // One connection checkout: no other query runs between the pragmas, so none sees the short wait.
      await db.connection().execute(async (c) => {
        await sql.raw(`pragma busy_timeout = ${Math.max(0, Math.floor(waitMs))}`).execute(c);
        try {
          await sql.raw('begin immediate').execute(c);
          await sql.raw('rollback').execute(c);
        } finally {
          await sql.raw(`pragma busy_timeout = ${BUSY_TIMEOUT_MS}`).execute(c);
        }
      });
    },
    close: () => db.destroy(),
  };
}

/** The embedded store: `<dataDir>/parley.db`. */
export async function openEmbeddedStore(options: OpenOptions): Promise<Store> {
  return createStore(await openSqlite(options));
}
