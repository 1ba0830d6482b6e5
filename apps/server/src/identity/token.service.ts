import { Buffer } from 'node:buffer';
import { hash, timingSafeEqual } from 'node:crypto';
import { ReasonCode } from '@parley/shared';
import { tokenDigest, type DeviceRepository } from '@parley/store';
import type { Presence } from '../messaging/presence.ts';

/** All concrete device classes, for `device_flag = -1`. */
const ALL_DEVICE_FLAGS = [0, 1, 2];

/** Grace between a DISCONNECT and closing the socket, so the client reads it. */
export const KICK_GRACE_MS = 2000;

export interface AuthResult {
  reason: number;
  deviceLevel: number;
  /**
   * Whether the user's person channel is banned, read in the same statement as
   * the credentials; undefined when the device has no record (then unknown).
   */
  banned?: boolean;
}

/**
 * Connection credentials: stored as SHA-256 digests and compared in constant
 * time, so a copy of the database leaks no usable token.
 */
export class TokenService {
  /** Cluster mode: told of every revocation, so other nodes close their matching sessions too. */
  onQuit: ((uid: string, deviceFlags: readonly number[]) => void) | undefined;

  constructor(
    private readonly devices: DeviceRepository,
    private readonly presence: Presence,
    private readonly tokenAuthOn: boolean,
  ) {}

  /** Stores (or replaces) the token of `(uid, deviceFlag)`. Existing connections stay open. */
  async store(uid: string, token: string, deviceFlag: number, deviceLevel: number, deviceId: string): Promise<void> {
    await this.devices.upsert({ uid, deviceFlag, deviceLevel, deviceId, tokenSha256: tokenDigest(token) });
  }

  /**
   * Revokes the device class (`-1` = APP, WEB and PC): later CONNECTs fail and
   * this node's matching sessions are told (DISCONNECT) and closed.
   */
  async quit(uid: string, deviceFlag: number): Promise<void> {
    const flags = deviceFlag === -1 ? ALL_DEVICE_FLAGS : [deviceFlag];
    await this.devices.revoke(uid, flags);
    this.kickLocal(uid, flags);
    this.onQuit?.(uid, flags);
  }

  /** Tells this node's sessions of `uid` with one of `deviceFlags` (DISCONNECT) and closes them. */
  kickLocal(uid: string, deviceFlags: readonly number[]): void {
    for (const session of this.presence.sessionsOfDevices(uid, deviceFlags)) {
      session.kick(ReasonCode.ConnectKick, 'login in other device');
    }
  }

  /**
   * Checks a CONNECT's credentials against the stored record: one indexed
   * statement, which also reads the user's ban.
   */
  async authenticate(uid: string, deviceFlag: number, token: string): Promise<AuthResult> {
    const record = await this.devices.getForConnect(uid, deviceFlag);
    if (!this.tokenAuthOn) return { reason: ReasonCode.Success, deviceLevel: record?.deviceLevel ?? 0, banned: record?.banned };
    if (token === '' || !record || record.tokenSha256 === '') return { reason: ReasonCode.AuthFail, deviceLevel: 0 };
    // The same digest as `tokenDigest`, as bytes: no hex text made and parsed back, and no Hash object
    // (one-shot `hash` costs a third of `createHash().update().digest()` per CONNECT).
    const given = hash('sha256', token, 'buffer');
    const stored = Buffer.from(record.tokenSha256, 'hex');
    if (stored.length !== given.length || !timingSafeEqual(given, stored)) {
      return { reason: ReasonCode.AuthFail, deviceLevel: 0 };
    }
    return { reason: ReasonCode.Success, deviceLevel: record.deviceLevel, banned: record.banned };
  }
}
