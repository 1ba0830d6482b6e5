import type { RouteResponse } from '@parley/shared';
import type { SystemUidService } from '../identity/system-uid.service.ts';
import type { TokenService } from '../identity/token.service.ts';
import type { ChannelService } from '../messaging/channel.service.ts';
import type { CmdService } from '../messaging/cmd.service.ts';
import type { ConversationService } from '../messaging/conversation.service.ts';
import type { EventService } from '../messaging/event.service.ts';
import type { Presence } from '../messaging/presence.ts';
import type { SendService } from '../messaging/send.service.ts';
import type { SyncService } from '../messaging/sync.service.ts';
import { createChannelApi } from './channel.api.ts';
import { createCmdApi } from './cmd.api.ts';
import { createConversationApi } from './conversation.api.ts';
import { createEventApi } from './event.api.ts';
import { createMessageApi } from './message.api.ts';
import { createSyncApi } from './sync.api.ts';
import { createUserApi } from './user.api.ts';

/** The services the business API's operations call. */
export interface ApiServices {
  nodeId: number;
  tokens: TokenService;
  systemUids: SystemUidService;
  presence: Presence;
  channels: ChannelService;
  send: SendService;
  sync: SyncService;
  conversations: ConversationService;
  cmd: CmdService;
  events: EventService;
  routeAddresses(host: string | undefined): RouteResponse;
}

/**
 * The business API's operations: wire bodies in (already schema-checked by the
 * route), wire answers out, the contract's validation texts in between, no
 * Fastify types. Each route makes one call here.
 */
export function createApi(s: ApiServices) {
  return {
    users: createUserApi(s),
    channels: createChannelApi(s.channels),
    messages: createMessageApi(s.send),
    sync: createSyncApi(s.sync),
    conversations: createConversationApi(s.conversations, s.sync),
    cmd: createCmdApi(s.cmd),
    events: createEventApi(s.events),
  };
}

export type Api = ReturnType<typeof createApi>;
