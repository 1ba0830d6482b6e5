import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '@parley/shared';
import type { ApiKey } from '../config/api-access.ts';
import { errorBody, type RouteErrorConfig } from './errors.ts';
import { RateLimiter } from './rate-limit.ts';
import { ruleFor, type RouteRule } from './route-scopes.ts';

export interface ApiAccessOptions {
  /** `api.keys`; empty = no authentication (the config allows that only on loopback or when explicitly allowed). */
  keys: readonly ApiKey[];
  /** Credential operations per minute, per key and per uid. */
  credentialRatePerKey: number;
  credentialRatePerUid: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The name of the API key the request authenticated with ('' when none). */
    apiKeyName: string;
    /** The route's access rule, looked up once per request. */
    apiRule: RouteRule | null;
  }
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** The credential a request presents: `Authorization: Bearer <secret>`, or v2's `token: <managerToken>` header. */
function presented(request: FastifyRequest): string | undefined {
  const auth = request.headers.authorization;
  if (auth !== undefined && auth.startsWith('Bearer ')) return auth.slice('Bearer '.length);
  const token = request.headers.token;
  return typeof token === 'string' && token !== '' ? token : undefined;
}

function ruleOf(request: FastifyRequest): RouteRule {
  request.apiRule ??= ruleFor(request.method, request.routeOptions.url ?? '');
  return request.apiRule;
}

/** Audit fields of a request body: who and what changed, never a credential. */
function auditSubject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return {};
  const b = body as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of ['uid', 'channel_id', 'channel_type', 'device_flag', 'device_level', 'conn_id']) {
    const v = b[field];
    if (typeof v === 'string' || typeof v === 'number') out[field] = typeof v === 'string' ? v.slice(0, 256) : v;
  }
  for (const field of ['subscribers', 'uids']) {
    const v = b[field];
    if (Array.isArray(v)) out[`${field}_count`] = v.length;
  }
  return out;
}

/** Answers with the route's own error shape (`/message/send` answers `{"error"}`). */
function refuse(request: FastifyRequest, reply: FastifyReply, status: number, code: ErrorCode, message: string) {
  const shape = (request.routeOptions.config as RouteErrorConfig | undefined)?.errorShape ?? 'legacy';
  return reply.status(status).send(errorBody(shape, status, code, message));
}

function tooMany(request: FastifyRequest, reply: FastifyReply, seconds: number, what: string) {
  reply.header('retry-after', String(seconds));
  return refuse(request, reply, 429, 'rate_limited', `too many credential operations for this ${what}; retry in ${seconds}s`);
}

/**
 * API key authentication and per-route scopes, credential rate limits and the
 * audit log. Keys are compared as SHA-256 digests in constant time, so neither
 * their content nor their length leaks through timing. The audit line names
 * the key, the route and the subject (uid, channel), never a token.
 */
export function installApiAccess(app: FastifyInstance, options: ApiAccessOptions): void {
  const keys = options.keys.map((key) => ({ key, digest: digest(key.secret) }));
  const perKey = new RateLimiter(options.credentialRatePerKey);
  const perUid = new RateLimiter(options.credentialRatePerUid);
  app.decorateRequest('apiKeyName', '');
  app.decorateRequest('apiRule', null);

  app.addHook('onRequest', async (request, reply) => {
    const rule = ruleOf(request);
    if (rule.access === 'public' || rule.access === 'bench' || keys.length === 0) return;
    const secret = presented(request);
    if (secret === undefined) {
      return refuse(request, reply, 401, 'unauthorized', 'an API key is required: Authorization: Bearer <key>');
    }
    const given = digest(secret);
    let match: ApiKey | undefined;
    for (const k of keys) if (timingSafeEqual(given, k.digest)) match = k.key;
    if (!match) return refuse(request, reply, 401, 'unauthorized', 'unknown API key');
    if (!match.scopes.includes(rule.access) && !match.scopes.includes('admin')) {
      return refuse(request, reply, 403, 'forbidden', `API key "${match.name}" lacks the "${rule.access}" scope`);
    }
    request.apiKeyName = match.name;
  });

  app.addHook('preHandler', async (request, reply) => {
    if (!ruleOf(request).rateLimited) return;
    const byKey = perKey.take(request.apiKeyName);
    if (byKey > 0) return tooMany(request, reply, byKey, 'API key');
    const uid = (request.body as { uid?: unknown } | undefined)?.uid;
    if (typeof uid === 'string' && uid.trim() !== '') {
      const byUid = perUid.take(uid.trim());
      if (byUid > 0) return tooMany(request, reply, byUid, 'uid');
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    const rule = ruleOf(request);
    if (!rule.audit) return;
    app.log.info(
      {
        audit: rule.audit,
        key: request.apiKeyName || null,
        route: `${request.method} ${request.routeOptions.url}`,
        status: reply.statusCode,
        ...auditSubject(request.body),
      },
      'audit',
    );
  });
}
