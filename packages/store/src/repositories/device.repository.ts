import type { Db } from '../db.ts';
import { compiledOnce } from './compiled-query.ts';

export interface DeviceRecord {
  uid: string;
  deviceFlag: number;
  deviceLevel: number;
  deviceId: string;
  /** Hex SHA-256 of the token; '' when revoked. */
  tokenSha256: string;
}

/** Device credentials keyed by `(uid, device_flag)`. Only token digests are stored. */
export function createDeviceRepository(db: Db) {
  /** The CONNECT look-up (uid, device_flag). */
  const lookup = compiledOnce(
    (uid: string, deviceFlag: number) =>
      db
        .selectFrom('devices')
        .select(['uid', 'device_flag', 'device_level', 'device_id', 'token_sha256'])
        .where('uid', '=', uid)
        .where('device_flag', '=', deviceFlag),
    ['\u0000uid', -0x7fff_fff1] as const,
  );
  return {
    async upsert(rec: DeviceRecord): Promise<void> {
      const now = Date.now();
      await db
        .insertInto('devices')
        .values({
          uid: rec.uid,
          device_flag: rec.deviceFlag,
          device_level: rec.deviceLevel,
          device_id: rec.deviceId,
          token_sha256: rec.tokenSha256,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc.columns(['uid', 'device_flag']).doUpdateSet({
            device_level: rec.deviceLevel,
            device_id: rec.deviceId,
            token_sha256: rec.tokenSha256,
            updated_at: now,
          }),
        )
        .execute();
    },

    async get(uid: string, deviceFlag: number): Promise<DeviceRecord | undefined> {
      const row = (await db.executeQuery(lookup(uid, deviceFlag))).rows[0];
      return row
        ? {
            uid: row.uid,
            deviceFlag: Number(row.device_flag),
            deviceLevel: Number(row.device_level),
            deviceId: row.device_id,
            tokenSha256: row.token_sha256,
          }
        : undefined;
    },

    /** Clears the tokens of the given device classes (level becomes master, as WuKongIM does). */
    async revoke(uid: string, deviceFlags: number[]): Promise<void> {
      await db
        .updateTable('devices')
        .set({ token_sha256: '', device_level: 1, updated_at: Date.now() })
        .where('uid', '=', uid)
        .where('device_flag', 'in', deviceFlags)
        .execute();
    },
  };
}

export type DeviceRepository = ReturnType<typeof createDeviceRepository>;
