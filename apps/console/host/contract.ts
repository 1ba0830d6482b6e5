import type {
  AddNodeRequest,
  ConsoleNode,
  HostError,
  HostErrorCode,
  HostInfo,
  NodeList,
  OpsGetRequest,
  OpsReply,
  RemoveNodeRequest,
  SetTokenRequest,
} from '@parley/shared';

/**
 * The one contract between the console's renderer and its host. The web
 * host (`parleyctl console`) carries it over loopback HTTP, the desktop host
 * (Electron main) over IPC; both run the same handlers (`handlers.ts`).
 * This module is type-only plus constants, so the renderer, the preload and
 * the hosts can all import it.
 */

/** Why the host refused or failed; `session_expired` is the web page's own (its cookie is no longer valid). */
export type HostFailure = HostError & { code: HostErrorCode | 'session_expired' };

/** A handler's answer: the value, or why the host refused or failed. */
export type HostResult<T> = { ok: true; value: T } | { ok: false; error: HostFailure };

/** Every IPC channel main listens on; nothing else is registered. */
export const HOST_CHANNELS = ['app:info', 'nodes:list', 'nodes:add', 'nodes:remove', 'nodes:set-token', 'ops:get'] as const;
export type HostChannel = (typeof HOST_CHANNELS)[number];

/** Request and answer types by channel. */
export interface HostMessages {
  'app:info': { req: undefined; res: HostInfo };
  'nodes:list': { req: undefined; res: NodeList };
  'nodes:add': { req: AddNodeRequest; res: ConsoleNode };
  'nodes:remove': { req: RemoveNodeRequest; res: NodeList };
  'nodes:set-token': { req: SetTokenRequest; res: ConsoleNode };
  'ops:get': { req: OpsGetRequest; res: OpsReply };
}

/** The handlers: each takes an untrusted payload and checks it before acting. */
export type HostHandlers = { [C in HostChannel]: (payload: unknown) => Promise<HostResult<HostMessages[C]['res']>> };

/** The object the preload exposes as `window.wkDesktop`, and the only thing it exposes. */
export interface WkDesktop {
  app: { info(): Promise<HostResult<HostInfo>> };
  nodes: {
    list(): Promise<HostResult<NodeList>>;
    add(req: AddNodeRequest): Promise<HostResult<ConsoleNode>>;
    remove(req: RemoveNodeRequest): Promise<HostResult<NodeList>>;
    setToken(req: SetTokenRequest): Promise<HostResult<ConsoleNode>>;
  };
  ops: { get(req: OpsGetRequest): Promise<HostResult<OpsReply>> };
}
