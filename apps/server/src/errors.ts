import type { ErrorCode } from '@parley/shared';
import { failureKind } from '@parley/store';

/**
 * The one error the server raises on purpose: a stable `code`, the HTTP
 * `status` it answers with and a `message` that is safe to show a client.
 * Services throw it; the central HTTP error handler puts it in the route's
 * envelope. Any other error is unexpected: its text never leaves the server.
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    /** Seconds a client should wait before retrying (`Retry-After`), when that helps. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** A refusal known in advance: code, status and text, without an `Error` (no stack) until it is thrown. */
export interface Refusal {
  readonly code: ErrorCode;
  readonly status: number;
  readonly message: string;
}

export const refusal = (r: Refusal): DomainError => new DomainError(r.code, r.status, r.message);

/** A 400: a request the contract refuses, often with the exact (Chinese) text WuKongIM answers. */
export const invalid = (message: string, code: ErrorCode = 'invalid_request'): DomainError => new DomainError(code, 400, message);

/**
 * What a client may learn of an error that is not a `DomainError`: a store
 * failure by its kind (the store logs the cause once per kind), nothing else.
 */
export function exposedError(err: unknown): DomainError | undefined {
  if (err instanceof DomainError) return err;
  const kind = failureKind(err);
  return kind ? new DomainError('store_unavailable', 503, `store writes failing (${kind})`, 1) : undefined;
}
