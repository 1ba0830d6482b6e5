import { Type, type Static } from '@sinclair/typebox';
import { Id, MAX_TOKEN_LENGTH, Uint8 } from './common.schema.ts';

/** `POST /user/token`: store a connection credential for `(uid, device_flag)`. */
export const UserTokenBody = Type.Object({
  uid: Id,
  token: Type.String({ maxLength: MAX_TOKEN_LENGTH }),
  device_flag: Type.Optional(Uint8),
  device_level: Type.Optional(Uint8),
  device_id: Type.Optional(Id),
});
export type UserTokenBody = Static<typeof UserTokenBody>;

/** `POST /user/device_quit`: revoke a device class (`-1` = APP, WEB and PC). */
export const DeviceQuitBody = Type.Object({
  uid: Type.Optional(Id),
  device_flag: Type.Integer({ minimum: -1, maximum: 255 }),
});
export type DeviceQuitBody = Static<typeof DeviceQuitBody>;

/** `GET /route` query. `uid` is accepted and ignored (SDK compatibility). */
export const RouteQuery = Type.Object({
  uid: Type.Optional(Type.String({ maxLength: 256 })),
  intranet: Type.Optional(Type.String({ maxLength: 16 })),
  node_id: Type.Optional(Type.String({ maxLength: 24 })),
  nodeId: Type.Optional(Type.String({ maxLength: 24 })),
  nodeID: Type.Optional(Type.String({ maxLength: 24 })),
});
export type RouteQuery = Static<typeof RouteQuery>;

/** Gateway addresses a client connects to; all three keys are always present. */
export const RouteResponse = Type.Object({
  tcp_addr: Type.String(),
  ws_addr: Type.String(),
  wss_addr: Type.String(),
});
export type RouteResponse = Static<typeof RouteResponse>;

/** `POST /route/batch` answer: one entry (this node's addresses) listing the uids asked about. */
export const RouteBatchResult = Type.Array(
  Type.Intersect([Type.Object({ uids: Type.Optional(Type.Array(Type.String())) }), RouteResponse]),
);
export type RouteBatchResult = Static<typeof RouteBatchResult>;
