import type { TSchema, Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { OpsReply } from '@parley/shared';
import type { HostResult } from '../../host/contract.ts';

/**
 * Every way an ops request can fail, as the console shows it. Each kind has
 * its own look: an operator must tell "the node is down" from "top is
 * disabled" from "the node answered something we cannot read".
 */
export type FailureKind =
  | 'unreachable'
  | 'timeout'
  | 'warming_up'
  | 'disabled'
  | 'unauthorized'
  | 'bad_query'
  | 'bad_response'
  | 'server_error'
  | 'session_expired'
  | 'refused';

export class OpsFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    /** The node's or host's message, or the first schema error (`/path: message`). */
    readonly detail: string,
    readonly status?: number,
  ) {
    super(`${kind}: ${detail}`);
  }
}

/** Which route answered: the same status means different things on each. */
export type OpsRoute = 'top' | 'readyz' | 'healthz' | 'debug';

function errorText(body: string): string {
  try {
    const j = JSON.parse(body) as { error?: unknown; msg?: unknown };
    if (typeof j.error === 'string') return j.error;
    if (typeof j.msg === 'string') return j.msg;
  } catch {
    // not JSON: the text itself
  }
  return body.slice(0, 200);
}

/** The first schema error of `value`, as `/path: message`. */
export function firstSchemaError(schema: TSchema, value: unknown): string | undefined {
  const e = Value.Errors(schema, value).First();
  return e ? `${e.path || '/'}: ${e.message}` : undefined;
}

/**
 * The one mapping from a host result to data or a failure (console.md §2.3):
 * network error → unreachable; top 404 → disabled; top 503 → warming up;
 * 400 → bad query; 401 → unauthorized; debug 404 → disabled; `/readyz` 503
 * is data (a not-ready body), not a failure; anything unparseable → bad
 * response with the first schema error.
 */
export function readReply<S extends TSchema>(route: OpsRoute, result: HostResult<OpsReply>, schema: S): Static<S> {
  if (!result.ok) {
    const { code, error } = result.error;
    if (code === 'unreachable' || code === 'too_large') throw new OpsFailure('unreachable', error);
    if (code === 'timeout') throw new OpsFailure('timeout', error);
    if (code === 'session_expired') throw new OpsFailure('session_expired', error);
    throw new OpsFailure('refused', error);
  }
  const { status, body } = result.value;
  const ok = status === 200 || (route === 'readyz' && status === 503);
  if (!ok) {
    const text = errorText(body);
    if (status === 401) throw new OpsFailure('unauthorized', text, status);
    if (status === 404 && (route === 'top' || route === 'debug')) throw new OpsFailure('disabled', text, status);
    if (status === 503 && route === 'top') throw new OpsFailure('warming_up', text, status);
    if (status === 400) throw new OpsFailure('bad_query', text, status);
    if (status >= 500) throw new OpsFailure('server_error', `${status} ${text}`, status);
    throw new OpsFailure('bad_response', `unexpected status ${status}: ${text}`, status);
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new OpsFailure('bad_response', 'the answer is not JSON', status);
  }
  const bad = firstSchemaError(schema, value);
  if (bad) throw new OpsFailure('bad_response', bad, status);
  return value as Static<S>;
}
