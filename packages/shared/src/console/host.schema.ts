import { Type, type Static } from '@sinclair/typebox';

/**
 * The console host contract: what the console's renderer asks of its host
 * (`parleyctl console` over loopback HTTP, or Electron's main process over
 * IPC). Both hosts run the same handlers; every payload crossing in is
 * checked against these schemas, since the renderer is not trusted.
 */

/** Most nodes one console host keeps. */
export const MAX_CONSOLE_NODES = 64;

/** A node the host may proxy to. Its debug/bench token never leaves the host: only `has_token` does. */
export const ConsoleNode = Type.Object({
  id: Type.String({ description: 'stable id derived from the URL (host-port), used in routes and query keys' }),
  url: Type.String({ description: 'the node HTTP API base URL' }),
  name: Type.Optional(Type.String()),
  has_token: Type.Boolean({ description: 'a bench.api_token is kept for /debug/* requests' }),
});
export type ConsoleNode = Static<typeof ConsoleNode>;

export const NodeList = Type.Object({ nodes: Type.Array(ConsoleNode) });
export type NodeList = Static<typeof NodeList>;

const NodeId = Type.String({ minLength: 1, maxLength: 128 });

export const AddNodeRequest = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s)://host:port[/base], no credentials, query or fragment' }),
    name: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type AddNodeRequest = Static<typeof AddNodeRequest>;

export const RemoveNodeRequest = Type.Object({ id: NodeId }, { additionalProperties: false });
export type RemoveNodeRequest = Static<typeof RemoveNodeRequest>;

/** An empty token forgets the one kept. */
export const SetTokenRequest = Type.Object({ id: NodeId, token: Type.String({ maxLength: 4096 }) }, { additionalProperties: false });
export type SetTokenRequest = Static<typeof SetTokenRequest>;

/** Most query parameters and the longest value an ops request may carry. */
export const MAX_OPS_QUERY_KEYS = 16;
export const MAX_OPS_QUERY_VALUE = 512;

export const OpsGetRequest = Type.Object(
  {
    node: NodeId,
    path: Type.String({ minLength: 1, maxLength: 512, description: '/healthz, /readyz, /top/v1/snapshot or /debug/...' }),
    query: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z0-9_]{1,64}$' }), Type.String({ maxLength: MAX_OPS_QUERY_VALUE }), {
        maxProperties: MAX_OPS_QUERY_KEYS,
        additionalProperties: false,
      }),
    ),
  },
  { additionalProperties: false },
);
export type OpsGetRequest = Static<typeof OpsGetRequest>;

/** A node's answer, passed through as text: the renderer parses it with the route's schema. */
export const OpsReply = Type.Object({
  status: Type.Integer(),
  content_type: Type.String(),
  body: Type.String(),
});
export type OpsReply = Static<typeof OpsReply>;

/** Why the host itself refused or failed a request (as opposed to what a node answered). */
export const HOST_ERROR_CODES = {
  invalid_request: 400,
  unknown_node: 404,
  path_not_allowed: 403,
  duplicate_node: 409,
  too_many_nodes: 409,
  unreachable: 502,
  timeout: 504,
  too_large: 502,
  // the migration wizard's
  no_root: 409,
  busy: 409,
  exists: 409,
  not_found: 404,
} as const;
export type HostErrorCode = keyof typeof HOST_ERROR_CODES;

export const HostError = Type.Object({
  error: Type.String({ description: 'a safe, human-readable message' }),
  code: Type.String({ description: 'one of HOST_ERROR_CODES' }),
});
export type HostError = Static<typeof HostError>;

/** What the host says about itself. */
export const HostInfo = Type.Object({
  platform: Type.Union([Type.Literal('web'), Type.Literal('desktop')]),
  version: Type.String(),
});
export type HostInfo = Static<typeof HostInfo>;
