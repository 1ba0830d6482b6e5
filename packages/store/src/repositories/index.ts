import type { Db } from '../db.ts';
import type { Dialect } from '../dialect.ts';
import { createChannelRepository } from './channel.repository.ts';
import { createClusterNodeRepository } from './cluster-node.repository.ts';
import { createCmdBindingRepository } from './cmd-binding.repository.ts';
import { createDeviceRepository } from './device.repository.ts';
import { createMembershipRepository } from './membership.repository.ts';
import { createMessageEventRepository } from './message-event.repository.ts';
import { createMessageRepository } from './message.repository.ts';
import { createSlotLeaseRepository } from './slot-lease.repository.ts';

/** The server's repositories over one connection; `dialect` names the engine behind `db` (SQLite unless told). */
export function createRepositories(db: Db, dialect: Dialect = 'sqlite') {
  return {
    devices: createDeviceRepository(db),
    channels: createChannelRepository(db),
    memberships: createMembershipRepository(db),
    messages: createMessageRepository(db, dialect),
    cmdBindings: createCmdBindingRepository(db),
    events: createMessageEventRepository(db, dialect),
    leases: createSlotLeaseRepository(db, dialect),
    clusterNodes: createClusterNodeRepository(db, dialect),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
