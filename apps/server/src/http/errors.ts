import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { failureKind } from '@parley/store';

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

/** An error a route raises on purpose: its message is safe to show. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** A 400 with a legacy validation text (often the exact Chinese text WuKongIM answers). */
export const badRequest = (message: string, code = 'invalid_request') => new ApiError(400, code, message);

export function errorBody(shape: ErrorShape, status: number, code: string, message: string): object {
  return shape === 'legacy' ? { msg: message, status, code } : { error: message, code };
}

function routeConfig(request: FastifyRequest): RouteErrorConfig {
  return (request.routeOptions.config ?? {}) as RouteErrorConfig;
}

/** Installs the one error handler: known errors keep their text, anything else hides its details. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const config = routeConfig(request);
    const shape = config.errorShape ?? 'legacy';
    if (err instanceof ApiError) {
      return reply.status(err.statusCode).send(errorBody(shape, err.statusCode, err.code, err.message));
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
    // The store logs its own failures once per kind; the caller learns the kind, not the details.
    const storeFailure = failureKind(err);
    if (storeFailure) {
      return reply
        .status(503)
        .header('retry-after', '1')
        .send(errorBody(shape, 503, 'store_unavailable', `store writes failing (${storeFailure})`));
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
