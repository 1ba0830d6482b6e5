import {
  ReasonCode,
  SYSTEM_UID,
  type ConnBody,
  type DeviceQuitBody,
  type OnlineStatus,
  type OnlineStatusResult,
  type RouteBatchResult,
  type RouteQuery,
  type RouteResponse,
  type StatusOk,
  type UidsBody,
  type UserTokenBody,
} from '@parley/shared';
import { invalid } from '../errors.ts';
import type { SystemUidService } from '../identity/system-uid.service.ts';
import type { TokenService } from '../identity/token.service.ts';
import type { Presence } from '../messaging/presence.ts';
import { checkTokenUid, requireUid } from './validate.ts';

const ok: StatusOk = { status: 200 };

export interface UserApiDeps {
  nodeId: number;
  tokens: TokenService;
  systemUids: SystemUidService;
  presence: Presence;
  /** Gateway addresses for `/route`; `host` is the host the request reached, for wildcard listeners. */
  routeAddresses(host: string | undefined): RouteResponse;
}

const uidsOf = (b: UidsBody) => (b.uids ?? []).map((u) => u.trim()).filter((u) => u !== '');

/** Connection identity: tokens, system uids, routes, online status and connection control. */
export function createUserApi(deps: UserApiDeps) {
  /** `/conn/kick` (DISCONNECT, then close) and `/conn/remove` (close): one connection of a uid on this node. */
  const endConnection = (b: ConnBody, kick: boolean): StatusOk => {
    const uid = b.uid.trim();
    if (uid === '') throw invalid('uid不能为空！');
    if (b.node_id !== undefined && b.node_id !== 0 && b.node_id !== deps.nodeId) throw invalid('节点参数有误！');
    for (const s of [...(deps.presence.sessionsOf(uid) ?? [])]) {
      if (s.id !== b.conn_id) continue;
      if (kick) s.kick(ReasonCode.ConnectKick, 'login in other device');
      else s.close('removed by the backend');
    }
    return ok;
  };

  return {
    /** `/user/token`: stores (or replaces) the token of `(uid, device_flag)`. */
    async storeToken(b: UserTokenBody): Promise<StatusOk> {
      const uid = requireUid(b.uid);
      if (b.token === '') throw invalid('token不能为空！');
      checkTokenUid(uid);
      if (uid === SYSTEM_UID) throw invalid('系统账号不允许更新token！');
      await deps.tokens.store(uid, b.token, b.device_flag ?? 0, b.device_level ?? 0, b.device_id ?? '');
      return ok;
    },

    /** `/user/device_quit`: revokes a device class (-1 = all) and kicks its sessions. */
    async deviceQuit(b: DeviceQuitBody): Promise<StatusOk> {
      if (![-1, 0, 1, 2].includes(b.device_flag)) throw invalid('device_flag must be -1, 0, 1 or 2');
      if (b.uid && b.uid.trim() !== '') await deps.tokens.quit(b.uid.trim(), b.device_flag);
      return ok;
    },

    /** `GET /route`: this node's gateway addresses (TCP only for `intranet`). */
    route(q: RouteQuery, host: string | undefined): RouteResponse {
      const nodeId = q.node_id ?? q.nodeId ?? q.nodeID;
      if (nodeId !== undefined && nodeId !== String(deps.nodeId)) throw invalid('节点参数有误！');
      const addresses = deps.routeAddresses(host);
      if (q.intranet !== undefined && q.intranet !== '' && q.intranet !== '0')
        return { tcp_addr: addresses.tcp_addr, ws_addr: '', wss_addr: '' };
      return addresses;
    },

    /** `POST /route/batch`: one node serves every uid. */
    routeBatch(uids: readonly string[], host: string | undefined): RouteBatchResult {
      return [{ ...(uids.length > 0 ? { uids: [...uids] } : {}), ...deps.routeAddresses(host) }];
    },

    /** `POST /user/onlinestatus`: every session of the uids on this node. */
    onlineStatus(uids: readonly string[]): OnlineStatusResult {
      if (uids.length === 0) return ok;
      const out: OnlineStatus[] = [];
      for (const uid of new Set(uids)) {
        for (const s of deps.presence.sessionsOf(uid) ?? []) out.push({ uid, device_flag: s.deviceFlag, online: 1 });
      }
      return out;
    },

    async addSystemUids(b: UidsBody): Promise<StatusOk> {
      await deps.systemUids.add(uidsOf(b));
      return ok;
    },
    async removeSystemUids(b: UidsBody): Promise<StatusOk> {
      await deps.systemUids.remove(uidsOf(b));
      return ok;
    },
    addSystemUidsToCache(b: UidsBody): StatusOk {
      deps.systemUids.addToCache(uidsOf(b));
      return ok;
    },
    removeSystemUidsFromCache(b: UidsBody): StatusOk {
      deps.systemUids.removeFromCache(uidsOf(b));
      return ok;
    },
    systemUids: (): string[] => deps.systemUids.list(),

    kick: (b: ConnBody): StatusOk => endConnection(b, true),
    removeConnection: (b: ConnBody): StatusOk => endConnection(b, false),
  };
}

export type UserApi = ReturnType<typeof createUserApi>;
