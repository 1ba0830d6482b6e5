import { openMemoryStore, type Store } from '@parley/store';
import { AppendQueue } from '../src/messaging/append-queue.ts';
import { ChannelCache } from '../src/messaging/channel-cache.ts';
import { ChannelService } from '../src/messaging/channel.service.ts';
import type { Delivery } from '../src/messaging/delivery.ts';
import { Fanout } from '../src/messaging/fanout.ts';
import { Presence, type SessionHandle } from '../src/messaging/presence.ts';
import { SendService, type SendOutcome } from '../src/messaging/send.service.ts';
import { createSnowflake } from '../src/messaging/snowflake.ts';

/** A session that records what it is sent (no socket). */
export interface RecordingSession extends SessionHandle {
  delivered: Delivery[];
}

let nextSessionId = 1;

export function recordingSession(uid: string, deviceFlag = 1): RecordingSession {
  const delivered: Delivery[] = [];
  return {
    id: nextSessionId++,
    uid,
    deviceFlag,
    deviceId: `${uid}-${deviceFlag}`,
    deviceLevel: 1,
    protocol: 'jsonrpc',
    delivered,
    deliver: (d) => delivered.push(d),
    kick() {},
    close() {},
  };
}

/**
 * The messaging services over a store in memory, wired as the server wires
 * them (no gateways): for unit tests of the services with real repositories.
 */
/** A send with every field at its zero value but the ones given. */
function textCommand(
  fromUid: string,
  channelId: string,
  channelType: number,
  text: string,
  over: Partial<Parameters<SendService['send']>[0]>,
): Parameters<SendService['send']>[0] {
  return {
    fromUid,
    deviceId: '',
    channelId,
    channelType,
    payload: Buffer.from(text),
    clientMsgNo: '',
    setting: 0,
    topic: '',
    expire: 0,
    redDot: false,
    syncOnce: false,
    noPersist: false,
    ...over,
  };
}

export async function messagingKit(options: { personWhitelistEnabled?: boolean; systemUids?: string[] } = {}) {
  const store: Store = await openMemoryStore();
  const cache = new ChannelCache(store.channels, store.memberships);
  const queue = new AppendQueue(store.messages, 64);
  const presence = new Presence();
  const fanout = new Fanout(presence, cache);
  const fanoutErrors: unknown[] = [];
  const send = new SendService({
    cache,
    isSystemUid: (uid) => (options.systemUids ?? []).includes(uid),
    systemDeviceId: '____device',
    personWhitelistEnabled: options.personWhitelistEnabled ?? false,
    snowflake: createSnowflake(1),
    queue,
    fanout,
    onFanoutError: (err) => fanoutErrors.push(err),
  });
  const channels = new ChannelService(store, queue, cache);
  return {
    store,
    cache,
    queue,
    presence,
    send,
    channels,
    fanoutErrors,
    /** A send with every field at its zero value but the ones given. */
    async sendText(
      fromUid: string,
      channelId: string,
      channelType: number,
      text: string,
      over: Partial<Parameters<SendService['send']>[0]> = {},
    ) {
      return send.send(textCommand(fromUid, channelId, channelType, text, over));
    },
    /** `sendText` through `SendService.submit` (the gateways' entry): which callback ran, with what. */
    submitText(
      fromUid: string,
      channelId: string,
      channelType: number,
      text: string,
      over: Partial<Parameters<SendService['send']>[0]> = {},
    ): Promise<{ settled: SendOutcome } | { failed: unknown }> {
      return new Promise((resolve) => {
        let calls = 0;
        const once = (r: { settled: SendOutcome } | { failed: unknown }) => {
          if (++calls > 1) throw new Error('submit settled a send twice');
          resolve(r);
        };
        send.submit(
          textCommand(fromUid, channelId, channelType, text, over),
          (settled) => once({ settled }),
          (failed) => once({ failed }),
        );
      });
    },
    async close() {
      await queue.drain();
      await store.close();
    },
  };
}

export type MessagingKit = Awaited<ReturnType<typeof messagingKit>>;
