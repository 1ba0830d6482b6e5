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

/** A device's credentials and its user's ban, as a CONNECT reads them. */
export interface ConnectRecord {
  deviceLevel: number;
  /** Hex SHA-256 of the token; '' when revoked. */
  tokenSha256: string;
  /** The user's person channel exists with `ban = 1`. */
  banned: boolean;
}

/** The person channel type (a user's own channel carries the user's ban). */
const PERSON_CHANNEL = 1;

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
  /**
   * A CONNECT's one statement: the device's credentials and, in the same index
   * seek's statement, the ban flag of the user's own person channel (type 1).
   */
  const connectLookup = compiledOnce(
    (channelId: string, uid: string, deviceFlag: number) =>
      db
        .selectFrom('devices')
        .select(['device_level', 'token_sha256'])
        .select((eb) =>
          eb
            .selectFrom('channels')
            .select('ban')
            .where('channel_id', '=', channelId)
            .where('channel_type', '=', eb.lit(PERSON_CHANNEL))
            .as('ban'),
        )
        .where('uid', '=', uid)
        .where('device_flag', '=', deviceFlag),
    ['\u0000channel_id', '\u0000uid', -0x7fff_fff3] as const,
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

    /**
     * What a CONNECT needs, in one statement: the device's level and token
     * digest and whether the user's person channel is banned; undefined when
     * the device has no record (its ban is then for `ChannelRepository.get`).
     */
    async getForConnect(uid: string, deviceFlag: number): Promise<ConnectRecord | undefined> {
      const row = (await db.executeQuery(connectLookup(uid, uid, deviceFlag))).rows[0];
      return row
        ? { deviceLevel: Number(row.device_level), tokenSha256: row.token_sha256, banned: row.ban !== null && Number(row.ban) === 1 }
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
