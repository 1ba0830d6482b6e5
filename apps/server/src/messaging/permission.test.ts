import { ChannelType, ReasonCode, SYSTEM_UID } from '@parley/shared';
import type { ChannelFlags } from '@parley/store';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ChannelState } from './channel-cache.ts';
import { checkSendPermission, type PermissionDeps, type PermissionInput } from './permission.ts';

/** Channel state in memory, keyed `type:id`; a channel not listed has no row and no lists. */
function cacheOf(channels: Record<string, Partial<ChannelFlags> & { subscribers?: string[]; deny?: string[]; allow?: string[] }>) {
  const stateOf = (channelId: string, channelType: number): ChannelState => {
    const c = channels[`${channelType}:${channelId}`];
    const flags = { ban: 0, disband: 0, large: 0, sendBan: 0, allowStranger: 0 };
    return {
      info: c && { channelId, channelType, ...flags, ...c },
      subscribers: new Set(c?.subscribers ?? []),
      deny: new Set(c?.deny ?? []),
      allow: new Set(c?.allow ?? []),
    };
  };
  return {
    get: async (channelId: string, channelType: number) => stateOf(channelId, channelType),
    // In the `cached` runs every state is already loaded, as after a channel's first send.
    ...(cached ? { peek: stateOf } : {}),
  };
}

/** Whether the fake cache has every state loaded (the synchronous path) or must load them (the promise path). */
let cached = false;

function deps(channels: Parameters<typeof cacheOf>[0], over: Partial<PermissionDeps> = {}): PermissionDeps {
  return {
    cache: cacheOf(channels),
    isSystemUid: (uid) => uid === 'sys-bot',
    systemDeviceId: '____device',
    personWhitelistEnabled: false,
    ...over,
  };
}

const group = (fromUid: string, channelId = 'g1', deviceId = ''): PermissionInput => ({
  fromUid,
  deviceId,
  channelId,
  channelType: ChannelType.Group,
});
const person = (fromUid: string, receiverUid: string): PermissionInput => ({
  fromUid,
  deviceId: '',
  channelId: [fromUid, receiverUid].sort().join('@'),
  channelType: ChannelType.Person,
  receiverUid,
});

for (const mode of [false, true]) {
  describe(mode ? 'every state cached: answered synchronously' : 'states loaded first', () => {
    beforeEach(() => {
      cached = mode;
    });

    it('returns a plain number exactly when every state is cached', () => {
      const r = checkSendPermission(group('a'), deps({ '2:g1': { subscribers: ['a'] } }));
      expect(typeof r === 'number').toBe(mode);
    });

    describe('checkSendPermission: groups', () => {
      const channels = { '2:g1': { subscribers: ['a', 'b', 'c'], deny: ['c'] } };

      it('lets a subscriber send', async () => {
        expect(await checkSendPermission(group('a'), deps(channels))).toBe(ReasonCode.Success);
      });

      it('refuses a missing channel, a banned one, then a disbanded one, in that order', async () => {
        expect(await checkSendPermission(group('a', 'nope'), deps(channels))).toBe(ReasonCode.ChannelNotExist);
        expect(await checkSendPermission(group('a'), deps({ '2:g1': { ban: 1, disband: 1, subscribers: ['a'] } }))).toBe(ReasonCode.Ban);
        expect(await checkSendPermission(group('a'), deps({ '2:g1': { disband: 1, subscribers: ['a'] } }))).toBe(ReasonCode.Disband);
      });

      it('checks the denylist before membership, and a non-empty allowlist after it', async () => {
        expect(await checkSendPermission(group('c'), deps(channels))).toBe(ReasonCode.InBlacklist);
        expect(await checkSendPermission(group('z'), deps(channels))).toBe(ReasonCode.SubscriberNotExist);
        const allow = { '2:g1': { subscribers: ['a', 'b'], allow: ['a'] } };
        expect(await checkSendPermission(group('a'), deps(allow))).toBe(ReasonCode.Success);
        expect(await checkSendPermission(group('b'), deps(allow))).toBe(ReasonCode.NotInWhitelist);
      });

      it('refuses a sender whose own person row has send_ban, before any channel rule', async () => {
        expect(await checkSendPermission(group('a'), deps({ ...channels, '1:a': { sendBan: 1 } }))).toBe(ReasonCode.SendBan);
      });

      it('lets system uids and the trusted system device through everything but a disband', async () => {
        const closed = { '2:g1': { ban: 1, subscribers: [] } };
        expect(await checkSendPermission(group(SYSTEM_UID), deps(closed))).toBe(ReasonCode.Success);
        expect(await checkSendPermission(group('sys-bot'), deps(closed))).toBe(ReasonCode.Success);
        expect(await checkSendPermission(group('x', 'g1', '____device'), deps(closed))).toBe(ReasonCode.Success);
        const gone = { '2:g1': { disband: 1 } };
        expect(await checkSendPermission(group('sys-bot'), deps(gone))).toBe(ReasonCode.Disband);
        expect(await checkSendPermission(group('x', 'g1', '____device'), deps(gone))).toBe(ReasonCode.Disband);
      });

      it('still applies send_ban to the trusted device, which is checked after the sender row', async () => {
        expect(await checkSendPermission(group('x', 'g1', '____device'), deps({ '1:x': { sendBan: 1 } }))).toBe(ReasonCode.SendBan);
      });
    });

    describe('checkSendPermission: person channels', () => {
      it("refuses a sender on the receiver's denylist", async () => {
        expect(await checkSendPermission(person('a', 'b'), deps({ '1:b': { deny: ['a'] } }))).toBe(ReasonCode.InBlacklist);
      });

      it('allows anyone else while the person allowlist switch is off', async () => {
        expect(await checkSendPermission(person('a', 'b'), deps({}))).toBe(ReasonCode.Success);
      });

      it('with the switch on: the allowlist, else allow_stranger, else refused', async () => {
        const on = { personWhitelistEnabled: true };
        expect(await checkSendPermission(person('a', 'b'), deps({}, on))).toBe(ReasonCode.NotInWhitelist);
        expect(await checkSendPermission(person('a', 'b'), deps({ '1:b': { allow: ['a'] } }, on))).toBe(ReasonCode.Success);
        expect(await checkSendPermission(person('a', 'b'), deps({ '1:b': { allowStranger: 1 } }, on))).toBe(ReasonCode.Success);
      });

      it('always lets anyone write to a system uid', async () => {
        const on = { personWhitelistEnabled: true };
        expect(await checkSendPermission(person('a', 'sys-bot'), deps({ '1:sys-bot': { deny: ['a'] } }, on))).toBe(ReasonCode.Success);
      });

      it('refuses a disbanded person channel', async () => {
        const input = person('a', 'b');
        expect(await checkSendPermission(input, deps({ [`1:${input.channelId}`]: { disband: 1 } }))).toBe(ReasonCode.Disband);
      });
    });

    describe('checkSendPermission: other channel types', () => {
      it('visitors: the visitor writes its own channel; others need membership of the customer-service channel', async () => {
        const v = (fromUid: string): PermissionInput => ({ fromUid, deviceId: '', channelId: 'v1', channelType: ChannelType.Visitors });
        expect(await checkSendPermission(v('v1'), deps({}))).toBe(ReasonCode.Success);
        expect(await checkSendPermission(v('agent'), deps({}))).toBe(ReasonCode.SubscriberNotExist);
        expect(await checkSendPermission(v('agent'), deps({ '3:v1': { subscribers: ['agent'] } }))).toBe(ReasonCode.Success);
      });

      it('agent channels: only the two uids of `a@b`', async () => {
        const a = (fromUid: string): PermissionInput => ({ fromUid, deviceId: '', channelId: 'u1@bot', channelType: ChannelType.Agent });
        expect(await checkSendPermission(a('u1'), deps({}))).toBe(ReasonCode.Success);
        expect(await checkSendPermission(a('u2'), deps({}))).toBe(ReasonCode.NotAllowSend);
      });

      it('any other type is open unless disbanded', async () => {
        const live: PermissionInput = { fromUid: 'a', deviceId: '', channelId: 'l1', channelType: ChannelType.Live };
        expect(await checkSendPermission(live, deps({}))).toBe(ReasonCode.Success);
        expect(await checkSendPermission(live, deps({ '9:l1': { disband: 1 } }))).toBe(ReasonCode.Disband);
      });
    });
  });
}
