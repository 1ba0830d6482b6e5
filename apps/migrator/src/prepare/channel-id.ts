import { ChannelType, CMD_SUFFIX, personChannelId } from '@parley/shared';

/**
 * The v3 channel id of a v2 channel: person channels (`A@B` fake ids,
 * optionally with the command suffix) become the canonical
 * `personChannelId`; every other id is kept. Returns a reason for a person id
 * that is not two non-empty uids.
 */
export function v3ChannelId(channelId: string, channelType: number): { id: string } | { problem: string } {
  if (channelType !== ChannelType.Person) return { id: channelId };
  const cmd = channelId.endsWith(CMD_SUFFIX);
  const base = cmd ? channelId.slice(0, -CMD_SUFFIX.length) : channelId;
  if (!base.includes('@')) return { id: channelId };
  const parts = base.split('@');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') {
    return { problem: `person channel id "${channelId}" is not two uids joined by one "@"` };
  }
  return { id: personChannelId(parts[0]!, parts[1]!) + (cmd ? CMD_SUFFIX : '') };
}
