import { ChannelType, ReasonCode, SYSTEM_UID } from '@parley/shared';
import type { ChannelCache } from './channel-cache.ts';

/** A send as the permission check sees it. */
export interface PermissionInput {
  fromUid: string;
  deviceId: string;
  /** Canonical channel id without any command suffix. */
  channelId: string;
  channelType: number;
  /** For person channels: the receiving uid. */
  receiverUid?: string;
}

export interface PermissionDeps {
  /** Channel state as the send path caches it (only reads). */
  cache: Pick<ChannelCache, 'get'>;
  isSystemUid(uid: string): boolean;
  systemDeviceId: string;
  personWhitelistEnabled: boolean;
}

/**
 * The send-permission rules in their documented order; the first failing
 * check decides the reason code. Returns `ReasonCode.Success` to allow.
 */
export async function checkSendPermission(input: PermissionInput, deps: PermissionDeps): Promise<number> {
  const { cache } = deps;
  const source = await cache.get(input.channelId, input.channelType);
  const disbanded = source.info?.disband === 1;
  if (input.fromUid === SYSTEM_UID || deps.isSystemUid(input.fromUid)) {
    return disbanded ? ReasonCode.Disband : ReasonCode.Success;
  }
  const senderRow = await cache.get(input.fromUid, ChannelType.Person);
  if (senderRow.info?.sendBan === 1) return ReasonCode.SendBan;
  if (input.deviceId !== '' && input.deviceId === deps.systemDeviceId) {
    return disbanded ? ReasonCode.Disband : ReasonCode.Success;
  }

  switch (input.channelType) {
    case ChannelType.Person: {
      if (disbanded) return ReasonCode.Disband;
      const receiver = input.receiverUid ?? '';
      if (receiver === SYSTEM_UID || deps.isSystemUid(receiver)) return ReasonCode.Success;
      const row = await cache.get(receiver, ChannelType.Person);
      if (row.deny.has(input.fromUid)) return ReasonCode.InBlacklist;
      if (!deps.personWhitelistEnabled) return ReasonCode.Success;
      if (row.allow.has(input.fromUid)) return ReasonCode.Success;
      if (row.info?.allowStranger === 1) return ReasonCode.Success;
      return ReasonCode.NotInWhitelist;
    }
    case ChannelType.Group: {
      if (!source.info) return ReasonCode.ChannelNotExist;
      if (source.info.ban === 1) return ReasonCode.Ban;
      if (disbanded) return ReasonCode.Disband;
      return memberChecks(input.fromUid, source);
    }
    case ChannelType.Visitors: {
      if (disbanded) return ReasonCode.Disband;
      if (input.fromUid === input.channelId) return ReasonCode.Success;
      return memberChecks(input.fromUid, await cache.get(input.channelId, ChannelType.CustomerService));
    }
    case ChannelType.Agent: {
      if (disbanded) return ReasonCode.Disband;
      const parts = input.channelId.split('@');
      return parts.length === 2 && parts.includes(input.fromUid) ? ReasonCode.Success : ReasonCode.NotAllowSend;
    }
    default:
      return disbanded ? ReasonCode.Disband : ReasonCode.Success;
  }
}

function memberChecks(uid: string, state: Awaited<ReturnType<ChannelCache['get']>>): number {
  if (state.deny.has(uid)) return ReasonCode.InBlacklist;
  if (!state.subscribers.has(uid)) return ReasonCode.SubscriberNotExist;
  if (state.allow.size > 0 && !state.allow.has(uid)) return ReasonCode.NotInWhitelist;
  return ReasonCode.Success;
}
