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

export type { Readiness } from '../observe/readiness.ts';
import type { Readiness } from '../observe/readiness.ts';

/** Everything the HTTP routes call into; plain objects, easy to build in tests. */
export interface HttpDeps {
  nodeId: number;
  tokens: TokenService;
  channels: ChannelService;
  send: SendService;
  sync: SyncService;
  conversations: ConversationService;
  cmd: CmdService;
  events: EventService;
  systemUids: SystemUidService;
  presence: Presence;
  readiness(): Promise<Readiness>;
  /** Gateway addresses for `/route`; `host` is the host the request reached, for wildcard listeners. */
  routeAddresses(host: string | undefined): RouteResponse;
}
