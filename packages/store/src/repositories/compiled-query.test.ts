import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../db.ts';
import { openMemorySqlite } from '../sqlite/open.ts';
import { compiledOnce } from './compiled-query.ts';
import { createChannelRepository } from './channel.repository.ts';
import { createDeviceRepository } from './device.repository.ts';
import { createMessageRepository } from './message.repository.ts';

describe('compiledOnce', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openMemorySqlite();
  });
  afterAll(async () => {
    await db.destroy();
  });

  it('runs one compiled query with each call’s own parameters', async () => {
    const devices = createDeviceRepository(db);
    for (const [uid, flag] of [
      ['a', 0],
      ['a', 1],
      ['b', 0],
    ] as const) {
      await devices.upsert({ uid, deviceFlag: flag, deviceLevel: flag, deviceId: `${uid}${flag}`, tokenSha256: '' });
    }
    expect((await devices.get('a', 1))?.deviceId).toBe('a1');
    expect((await devices.get('b', 0))?.deviceId).toBe('b0');
    expect((await devices.get('a', 0))?.deviceId).toBe('a0');
    expect(await devices.get('b', 1)).toBeUndefined();
  });

  it("reads a channel's tail (newest seq or its log's floor, the higher) and its member lists, each call with its own channel", async () => {
    const messages = createMessageRepository(db);
    const channels = createChannelRepository(db);
    const row = (channelId: string, seq: number) => ({
      channel_id: channelId,
      channel_type: 2,
      message_seq: seq,
      message_id: BigInt(seq),
      client_msg_no: '',
      from_uid: 'u',
      setting: 0,
      flags: 0,
      expire: 0,
      topic: '',
      created_at: 0,
      payload: new Uint8Array([1]),
    });
    await db
      .insertInto('messages')
      .values([row('t1', 1), row('t1', 4), row('t2', 9), row('t3', 2)])
      .execute();
    await db
      .insertInto('channel_log')
      .values([
        { channel_id: 't2', channel_type: 2, tail_seq: 5 },
        { channel_id: 't3', channel_type: 2, tail_seq: 30 },
        { channel_id: 't4', channel_type: 2, tail_seq: 7 },
      ])
      .execute();
    expect(await messages.loadTail('t1', 2)).toBe(4);
    expect(await messages.loadTail('t2', 2)).toBe(9);
    expect(await messages.loadTail('t3', 2)).toBe(30);
    expect(await messages.loadTail('t4', 2)).toBe(7);
    expect(await messages.loadTail('t1', 1)).toBe(0);
    expect(await messages.loadTail('none', 2)).toBe(0);
    // Several at once: the same answers, in the order asked.
    expect(
      await messages.loadTails([
        { channelId: 't3', channelType: 2 },
        { channelId: 'none', channelType: 2 },
        { channelId: 't1', channelType: 2 },
        { channelId: 't2', channelType: 2 },
        { channelId: 't4', channelType: 2 },
        { channelId: 't1', channelType: 1 },
      ]),
    ).toEqual([30, 0, 4, 9, 7, 0]);

    await channels.addMembers('t1', 2, 'deny', ['zed', 'amy']);
    await channels.addMembers('t1', 2, 'allow', ['bob']);
    await channels.addMembers('t2', 2, 'deny', ['cat']);
    expect(await channels.listMembers('t1', 2, 'deny')).toEqual(['amy', 'zed']);
    expect(await channels.listMembers('t1', 2, 'allow')).toEqual(['bob']);
    expect(await channels.listMembers('t2', 2, 'deny')).toEqual(['cat']);
    expect(await channels.listMembers('t2', 2, 'allow')).toEqual([]);
    expect(await channels.listMembers('t1', 1, 'deny')).toEqual([]);
    await channels.addMembers('t1', 2, 'temp', ['tim']);
    // A channel's row and its deny and allow lists in one statement (no `temp`; no row, no lists: neither).
    await channels.upsert('t1', 2, { ban: 1, sendBan: 1 });
    const sorted = (s: { row: unknown; deny: string[]; allow: string[] }) => ({
      ...s,
      deny: [...s.deny].sort(),
      allow: [...s.allow].sort(),
    });
    expect(sorted(await channels.permissionState('t1', 2))).toEqual({
      row: { channelId: 't1', channelType: 2, ban: 1, disband: 0, large: 0, sendBan: 1, allowStranger: 0 },
      deny: ['amy', 'zed'],
      allow: ['bob'],
    });
    expect(await channels.permissionState('t2', 2)).toEqual({ row: undefined, deny: ['cat'], allow: [] });
    expect(await channels.permissionState('t1', 1)).toEqual({ row: undefined, deny: [], allow: [] });
    await channels.upsert('t9', 2, {});
    expect(await channels.permissionState('t9', 2)).toEqual({ row: await channels.get('t9', 2), deny: [], allow: [] });
  });

  it('refuses a query whose parameters are not its marks in order', () => {
    const swapped = compiledOnce(
      (uid: string, flag: number) => db.selectFrom('devices').select('uid').where('device_flag', '=', flag).where('uid', '=', uid),
      ['\u0000uid', -1] as const,
    );
    expect(() => swapped('a', 0)).toThrow(/not its marks in order/);
  });
});
