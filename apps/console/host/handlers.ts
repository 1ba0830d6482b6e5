import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  AddNodeRequest,
  HOST_ERROR_CODES,
  OpsGetRequest,
  RemoveNodeRequest,
  SetTokenRequest,
  type HostErrorCode,
  type HostInfo,
  type OpsReply,
} from '@parley/shared';
import { MIGRATION_CHANNELS, type HostHandlers, type HostResult, type MigrationHandlers } from './contract.ts';
import { createMigrationHandlers, type MigrationDeps } from './migration/handlers.ts';
import type { NodeRegistry } from './node-registry.ts';
import { isAllowedOpsPath, isDebugPath, upstreamUrl } from './ops-paths.ts';

/** What the handlers need from their host; Electron main and `parleyctl console` each pass their own. */
export interface HostDeps {
  registry: NodeRegistry;
  /** `fetch` (Node) or `net.fetch` (Electron main). */
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  platform: HostInfo['platform'];
  version: string;
  /** Longest wait for a node's answer, ms. */
  timeoutMs?: number;
  /** Largest node answer passed on, bytes. */
  maxBodyBytes?: number;
  /** The migration wizard: how to run `parleyctl`, and so on. Absent: its channels answer that this host has none. */
  migration?: Omit<MigrationDeps, 'registry' | 'opsGet'>;
}

export const DEFAULT_OPS_TIMEOUT_MS = 5_000;
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

export function fail<T>(code: HostErrorCode, message: string): HostResult<T> {
  return { ok: false, error: { code, error: message } };
}

/** The first schema error of an untrusted payload, as one readable line. */
function invalid(schema: TSchema, payload: unknown): string | undefined {
  if (Value.Check(schema, payload)) return undefined;
  const first = Value.Errors(schema, payload).First();
  return first ? `${first.path || '/'}: ${first.message}` : 'invalid payload';
}

class TooLarge extends Error {}

/** Reads a body as UTF-8 text, giving up past `max` bytes. */
async function readCapped(res: Response, max: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > max) throw new TooLarge();
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      throw new TooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The console host's handlers, one per channel of `HOST_CHANNELS`. Pure
 * functions of their deps: no Electron, no HTTP server, so Vitest runs them
 * as they are. `ops:get` is the whole proxy: configured nodes only, ops
 * paths only, GET only, redirects not followed, the node's token attached
 * here and never returned.
 */
export function createHostHandlers(deps: HostDeps): HostHandlers {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_OPS_TIMEOUT_MS;
  const maxBody = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const { registry } = deps;

  const base = {
    async 'app:info'() {
      return { ok: true, value: { platform: deps.platform, version: deps.version } };
    },

    async 'nodes:list'() {
      return { ok: true, value: { nodes: registry.list() } };
    },

    async 'nodes:add'(payload) {
      const bad = invalid(AddNodeRequest, payload);
      if (bad) return fail('invalid_request', bad);
      const req = payload as AddNodeRequest;
      const added = registry.add(req.url, req.name);
      if ('code' in added) return fail(added.code, added.message);
      return { ok: true, value: added };
    },

    async 'nodes:remove'(payload) {
      const bad = invalid(RemoveNodeRequest, payload);
      if (bad) return fail('invalid_request', bad);
      const { id } = payload as RemoveNodeRequest;
      if (!registry.remove(id)) return fail('unknown_node', 'no such node is configured');
      return { ok: true, value: { nodes: registry.list() } };
    },

    async 'nodes:set-token'(payload) {
      const bad = invalid(SetTokenRequest, payload);
      if (bad) return fail('invalid_request', bad);
      const { id, token } = payload as SetTokenRequest;
      const node = registry.setToken(id, token);
      if (!node) return fail('unknown_node', 'no such node is configured');
      return { ok: true, value: node };
    },

    async 'ops:get'(payload): Promise<HostResult<OpsReply>> {
      const bad = invalid(OpsGetRequest, payload);
      if (bad) return fail('invalid_request', bad);
      const req = payload as OpsGetRequest;
      const node = registry.get(req.node);
      if (!node) return fail('unknown_node', 'no such node is configured');
      if (!isAllowedOpsPath(req.path))
        return fail('path_not_allowed', 'only /healthz, /readyz, /top/v1/snapshot and /debug/* are forwarded');
      const url = upstreamUrl(node.url, req.path, req.query);
      if (!url) return fail('path_not_allowed', 'the path leaves the node');
      const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9' };
      if (node.token && isDebugPath(req.path)) headers.authorization = `Bearer ${node.token}`;
      let res: Response;
      try {
        res = await deps.fetch(url.href, { method: 'GET', headers, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
      } catch (err) {
        const name = (err as Error).name;
        if (name === 'TimeoutError' || name === 'AbortError') return fail('timeout', `the node did not answer within ${timeoutMs} ms`);
        return fail('unreachable', 'the node cannot be reached');
      }
      try {
        const body = await readCapped(res, maxBody);
        return { ok: true, value: { status: res.status, content_type: res.headers.get('content-type') ?? '', body } };
      } catch (err) {
        if (err instanceof TooLarge) return fail('too_large', `the answer is larger than ${maxBody} bytes`);
        const name = (err as Error).name;
        if (name === 'TimeoutError' || name === 'AbortError') return fail('timeout', `the node did not answer within ${timeoutMs} ms`);
        return fail('unreachable', 'the connection to the node broke');
      }
    },
  } satisfies Omit<HostHandlers, keyof MigrationHandlers>;

  const migration: MigrationHandlers = deps.migration
    ? createMigrationHandlers({ ...deps.migration, registry, opsGet: base['ops:get'] }).handlers
    : (Object.fromEntries(
        MIGRATION_CHANNELS.map((c) => [c, async () => fail('invalid_request', 'this console host cannot run parleyctl')]),
      ) as unknown as MigrationHandlers);
  return { ...base, ...migration };
}

/** HTTP status a host error maps to. */
export function hostErrorStatus(code: string): number {
  return (HOST_ERROR_CODES as Record<string, number>)[code] ?? 500;
}
