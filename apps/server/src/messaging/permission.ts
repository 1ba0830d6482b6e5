import { ChannelType, ReasonCode, SYSTEM_UID } from '@parley/shared';
import type { ChannelCache, ChannelState } from './channel-cache.ts';

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
  /**
   * Channel state as the send path caches it (only reads); `peek` lets a send with every state
   * cached skip the promises, `generation` lets the send path keep a person channel's permission.
   */
  cache: Pick<ChannelCache, 'get'> & Partial<Pick<ChannelCache, 'peek' | 'generation'>>;
  isSystemUid(uid: string): boolean;
  systemDeviceId: string;
  personWhitelistEnabled: boolean;
}

/** A channel's state, or undefined when it is not at hand. */
type Lookup = (channelId: string, channelType: number) => ChannelState | undefined;

/**
 * The send-permission rules in their documented order; the first failing
 * check decides the reason code. Returns `ReasonCode.Success` to allow.
 * Synchronous (a plain number) when every channel state it needs is already
 * cached, which is every send but a channel's first; otherwise a promise.
 */
export function checkSendPermission(input: PermissionInput, deps: PermissionDeps): number | Promise<number> {
  const { cache } = deps;
  if (cache.peek) {
    const fast = sendRules(input, deps, (id, type) => cache.peek!(id, type));
    if (fast !== undefined) return fast;
  }
  return loadThenCheck(input, deps);
}

/** Loads every channel state the rules may read, then applies them. */
async function loadThenCheck(input: PermissionInput, deps: PermissionDeps): Promise<number> {
  const keys: Array<[string, number]> = [
    [input.channelId, input.channelType],
    [input.fromUid, ChannelType.Person],
  ];
  if (input.channelType === ChannelType.Person) keys.push([input.receiverUid ?? '', ChannelType.Person]);
  if (input.channelType === ChannelType.Visitors) keys.push([input.channelId, ChannelType.CustomerService]);
  const states = await Promise.all(keys.map(([id, type]) => deps.cache.get(id, type)));
  const loaded = new Map(keys.map(([id, type], i) => [`${type}:${id}`, states[i]!]));
  return sendRules(input, deps, (id, type) => loaded.get(`${type}:${id}`))!;
}

/** The rules over `lookup`; undefined when a state they need is not at hand. */
function sendRules(input: PermissionInput, deps: PermissionDeps, lookup: Lookup): number | undefined {
  const source = lookup(input.channelId, input.channelType);
  if (!source) return undefined;
  const disbanded = source.info?.disband === 1;
  if (input.fromUid === SYSTEM_UID || deps.isSystemUid(input.fromUid)) {
    return disbanded ? ReasonCode.Disband : ReasonCode.Success;
  }
  const senderRow = lookup(input.fromUid, ChannelType.Person);
  if (!senderRow) return undefined;
  if (senderRow.info?.sendBan === 1) return ReasonCode.SendBan;
  if (input.deviceId !== '' && input.deviceId === deps.systemDeviceId) {
    return disbanded ? ReasonCode.Disband : ReasonCode.Success;
  }

  switch (input.channelType) {
    case ChannelType.Person: {
      if (disbanded) return ReasonCode.Disband;
      const receiver = input.receiverUid ?? '';
      if (receiver === SYSTEM_UID || deps.isSystemUid(receiver)) return ReasonCode.Success;
      const row = lookup(receiver, ChannelType.Person);
      if (!row) return undefined;
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
      const service = lookup(input.channelId, ChannelType.CustomerService);
      return service ? memberChecks(input.fromUid, service) : undefined;
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

function memberChecks(uid: string, state: ChannelState): number {
  if (state.deny.has(uid)) return ReasonCode.InBlacklist;
  if (!state.subscribers.has(uid)) return ReasonCode.SubscriberNotExist;
  if (state.allow.size > 0 && !state.allow.has(uid)) return ReasonCode.NotInWhitelist;
  return ReasonCode.Success;
}
