import type { Logger } from 'pino';
import type { Store } from '@parley/store';
import type { Config } from './config/config.ts';
import { SystemUidService } from './identity/system-uid.service.ts';
import { TokenService } from './identity/token.service.ts';
import { AppendQueue } from './messaging/append-queue.ts';
import { ChannelCache } from './messaging/channel-cache.ts';
import { ChannelService } from './messaging/channel.service.ts';
import { CmdService } from './messaging/cmd.service.ts';
import { ConversationService } from './messaging/conversation.service.ts';
import { EventService } from './messaging/event.service.ts';
import type { MessagingEvents } from './messaging/events.ts';
import { Fanout } from './messaging/fanout.ts';
import { Presence } from './messaging/presence.ts';
import { SendService } from './messaging/send.service.ts';
import { createSnowflake } from './messaging/snowflake.ts';
import { SyncService } from './messaging/sync.service.ts';
import { createWebhooks } from './webhook/webhooks.ts';

/**
 * The node's services over one store, wired once: the server puts its
 * listeners around them, and route tests build the HTTP app from them alone.
 * Loads the persisted system uids before it returns.
 */
export async function createServices(config: Config, store: Store, log: Logger) {
  const systemUids = new SystemUidService(store.channels);
  await systemUids.load();
  const cache = new ChannelCache(store.channels, store.memberships);
  const queue = new AppendQueue(store.messages, config.store.batchMaxRows);
  /** Observers (webhooks) attach their handlers here. */
  const events: MessagingEvents = {};
  const webhooks = createWebhooks(config.webhook, log);
  webhooks?.attach(events);
  const presence = new Presence(events);
  const fanout = new Fanout(presence, cache, events);
  const send = new SendService({
    cache,
    isSystemUid: (uid) => systemUids.has(uid),
    systemDeviceId: config.message.systemDeviceId,
    personWhitelistEnabled: config.message.personWhitelistEnabled,
    snowflake: createSnowflake(config.node.id),
    queue,
    fanout,
    events,
    onFanoutError: (err) => log.error({ err }, 'fan-out failed'),
  });
  return {
    systemUids,
    cache,
    queue,
    webhooks,
    presence,
    fanout,
    send,
    tokens: new TokenService(store.devices, presence, config.gateway.tokenAuthOn),
    channels: new ChannelService(store, queue, cache),
    sync: new SyncService(store, (err) => log.error({ err }, 'message sync batch item failed')),
    conversations: new ConversationService(store, queue),
    cmd: new CmdService(store, queue),
    events: new EventService(store),
  };
}

export type Services = Awaited<ReturnType<typeof createServices>>;
