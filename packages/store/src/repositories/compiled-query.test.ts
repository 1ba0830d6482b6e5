import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../db.ts';
import { openMemorySqlite } from '../sqlite/open.ts';
import { compiledOnce } from './compiled-query.ts';
import { createDeviceRepository } from './device.repository.ts';

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

  it('refuses a query whose parameters are not its marks in order', () => {
    const swapped = compiledOnce(
      (uid: string, flag: number) => db.selectFrom('devices').select('uid').where('device_flag', '=', flag).where('uid', '=', uid),
      ['\u0000uid', -1] as const,
    );
    expect(() => swapped('a', 0)).toThrow(/not its marks in order/);
  });
});
