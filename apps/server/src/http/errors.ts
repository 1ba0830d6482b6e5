import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '@parley/shared';
import { exposedError } from '../errors.ts';

/**
 * Error body shapes. Most business routes answer WuKongIM's legacy
 * `{"msg","status"}`; `/message/send` and the operations routes answer
 * `{"error"}`. Both carry Parley's stable machine-readable `code`.
 */
export type ErrorShape = 'legacy' | 'error';

/** Per-route settings the central error handler reads (Fastify route `config`). */
export interface RouteErrorConfig {
  errorShape?: ErrorShape;
  /** Message for a body that does not bind (bad JSON, wrong types). */
  bindMessage?: string;
  /** Message for a body over the route's limit, however it was sent (Content-Length or chunked). */
  tooLargeMessage?: string;
}

export function errorBody(shape: ErrorShape, status: number, code: ErrorCode, message: string): object {
  return shape === 'legacy' ? { msg: message, status, code } : { error: message, code };
}

function routeConfig(request: FastifyRequest): RouteErrorConfig {
  return (request.routeOptions.config ?? {}) as RouteErrorConfig;
}

/**
 * Installs the one error handler: a `DomainError` answers its status, code and
 * text in the route's envelope; Fastify's own refusals (bad JSON, wrong types,
 * media type, size) answer theirs; a store failure answers 503 with its kind;
 * anything else is logged and answers a bare 500 that hides its text.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const config = routeConfig(request);
    const shape = config.errorShape ?? 'legacy';
    // A DomainError, or a store failure (logged by the store once per kind): the caller learns the kind, not the details.
    const known = exposedError(err);
    if (known) {
      if (known.retryAfter !== undefined) reply.header('retry-after', String(known.retryAfter));
      return reply.status(known.status).send(errorBody(shape, known.status, known.code, known.message));
    }
    if (
      err.validation ||
      err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
      err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
      err instanceof SyntaxError
    ) {
      return reply.status(400).send(errorBody(shape, 400, 'invalid_request', config.bindMessage ?? '数据格式有误！'));
    }
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.status(415).send(errorBody(shape, 415, 'unsupported_media_type', 'Content-Type must be application/json'));
    }
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.status(413).send(errorBody(shape, 413, 'payload_too_large', config.tooLargeMessage ?? 'request body too large'));
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.status(err.statusCode).send(errorBody(shape, err.statusCode, 'bad_request', err.message));
    }
    request.log.error({ err }, 'request failed');
    return reply.status(500).send(errorBody(shape, 500, 'internal_error', 'internal error'));
  });
  app.setNotFoundHandler((request, reply) => {
    const allowed = allowedMethods(app, request);
    if (allowed.length > 0) {
      return reply.status(405).header('allow', allowed.join(', ')).type('text/plain').send('405 method not allowed');
    }
    return reply.status(404).type('text/plain').send('404 page not found');
  });
}

/** Methods a request could have used on its path; checked only once routing found nothing. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * The methods registered for the request's path (Gin's `HandleMethodNotAllowed`):
 * non-empty means the path is known and only the method is wrong, which answers
 * 405 with an `Allow` header instead of 404.
 */
function allowedMethods(app: FastifyInstance, request: FastifyRequest): string[] {
  const path = request.url.split('?', 1)[0]!;
  return METHODS.filter((method) => method !== request.method && app.findRoute({ method, url: path }) !== null);
}
