import type { Db } from '../db.ts';
import { createChannelRepository } from './channel.repository.ts';
import { createCmdBindingRepository } from './cmd-binding.repository.ts';
import { createDeviceRepository } from './device.repository.ts';
import { createMembershipRepository } from './membership.repository.ts';
import { createMessageEventRepository } from './message-event.repository.ts';
import { createMessageRepository } from './message.repository.ts';

/** The server's repositories over one connection (any dialect). */
export function createRepositories(db: Db) {
  return {
    devices: createDeviceRepository(db),
    channels: createChannelRepository(db),
    memberships: createMembershipRepository(db),
    messages: createMessageRepository(db),
    cmdBindings: createCmdBindingRepository(db),
    events: createMessageEventRepository(db),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
