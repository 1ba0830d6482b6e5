/**
 * The stable machine-readable `code` of every error body the server sends
 * (in both envelopes, `LegacyError` and `ErrorBody`). Clients may branch on
 * it; the text beside it is for people and may change.
 */
export const ERROR_CODES = [
  // a request the contract refuses (400)
  'invalid_request',
  'invalid_payload',
  'invalid_channel_id',
  'invalid_last_msg_seqs',
  'request_subscribers_require_sync_once',
  'request_subscribers_cannot_include_channel_id',
  'request_subscribers_required',
  'channel_not_found',
  'sync_rejected',
  'conversation_rejected',
  'event_rejected',
  'too_many_items',
  // operations routes' queries (400, 404, 409, 503)
  'invalid_query',
  'invalid_window',
  'invalid_view',
  'invalid_limit',
  'invalid_seconds',
  'unknown_profile',
  'profiler_busy',
  'not_configured',
  'warming_up',
  'bench_error',
  // a send whose client_msg_no was used with another payload (409)
  'idempotency_conflict',
  // transport and access (400, 401, 403, 413, 415, 429)
  'bad_request',
  'unsupported_media_type',
  'payload_too_large',
  'unauthorized',
  'forbidden',
  'origin_not_allowed',
  'rate_limited',
  // the server's side (503, 500): the kind only, never the details
  'store_unavailable',
  // cluster mode: the owner of a channel's slot could not be reached in time (503)
  'cluster_unavailable',
  'internal_error',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];
