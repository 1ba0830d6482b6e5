import { createChannelRepository } from './channel.repository.ts';
import { createCmdBindingRepository } from './cmd-binding.repository.ts';
import { createMessageEventRepository } from './message-event.repository.ts';
import { openSqlite, type Db, type OpenOptions } from './db.ts';
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
    close: () => db.destroy(),
  };
}

/** The embedded store: `<dataDir>/parley.db`. */
export async function openEmbeddedStore(options: OpenOptions): Promise<Store> {
  return createStore(await openSqlite(options));
}
