import type { CompiledQuery } from 'kysely';
import type { Db } from '../db.ts';

export interface DeviceRecord {
  uid: string;
  deviceFlag: number;
  deviceLevel: number;
  deviceId: string;
  /** Hex SHA-256 of the token; '' when revoked. */
  tokenSha256: string;
}

interface DeviceRow {
  uid: string;
  device_flag: number;
  device_level: number;
  device_id: string;
  token_sha256: string;
}

const UID_MARK = '\u0000uid';
const FLAG_MARK = -0x7fff_fff1;

/** Device credentials keyed by `(uid, device_flag)`. Only token digests are stored. */
export function createDeviceRepository(db: Db) {
  /**
   * The CONNECT look-up, compiled once: every CONNECT runs it, and building and
   * compiling the query each time cost more than the index seek itself. Its
   * parameters are (uid, device_flag) in that order, checked below.
   */
  let byKey: CompiledQuery<DeviceRow> | undefined;
  const lookup = (uid: string, deviceFlag: number): CompiledQuery<DeviceRow> => {
    if (!byKey) {
      const compiled = db
        .selectFrom('devices')
        .select(['uid', 'device_flag', 'device_level', 'device_id', 'token_sha256'])
        .where('uid', '=', UID_MARK)
        .where('device_flag', '=', FLAG_MARK)
        .compile();
      if (compiled.parameters.length !== 2 || compiled.parameters[0] !== UID_MARK || compiled.parameters[1] !== FLAG_MARK) {
        throw new Error('device look-up: unexpected parameter order');
      }
      byKey = compiled;
    }
    return { ...byKey, parameters: [uid, deviceFlag] };
  };
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
