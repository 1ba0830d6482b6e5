/**
 * JSON-RPC 2.0 framing as the WuKongIM gateway uses it: one JSON object per
 * WebSocket text message; `jsonrpc` optional but, when present, "2.0";
 * responses correlated by `id` only.
 */

/** Standard JSON-RPC error codes used by the gateway. */
export const JsonRpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;

export type JsonRpcId = string | number;

export type JsonRpcFrame =
  | { kind: 'request'; id: JsonRpcId; method: string; params: unknown }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'response'; id: JsonRpcId | null; result?: unknown; error?: JsonRpcErrorObject };

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A frame that could not be decoded; `id` is set when the request's id was readable. */
export class JsonRpcDecodeError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly id: JsonRpcId | null = null,
    /** The frame was well formed but too deep to process: the session can go on. */
    readonly recoverable = false,
  ) {
    super(message);
    this.name = 'JsonRpcDecodeError';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A request id: any non-empty string, as the contract sets no other limit (the
 * gateway's frame limit, `gateway.max_frame_bytes`, bounds it), or a safe
 * integer from lenient clients.
 */
function readId(raw: unknown): JsonRpcId | null | undefined {
  if (raw === undefined || raw === null) return raw as null | undefined;
  if (typeof raw === 'string' && raw.length >= 1) return raw;
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) return raw;
  throw new JsonRpcDecodeError(JsonRpcErrorCode.InvalidRequest, 'id must be a non-empty string or an integer');
}

/** Deepest object/array nesting accepted in a frame (params and payload objects included). */
export const MAX_FRAME_DEPTH = 64;

/**
 * Whether `text` holds at most `max` `{` and `[` characters (inside strings
 * too): then nothing in it can nest deeper than `max`. Native `indexOf` calls,
 * a handful for an ordinary frame, instead of a scan of every character.
 */
function openersAtMost(text: string, max: number): boolean {
  let count = 0;
  for (const opener of ['{', '[']) {
    for (let i = text.indexOf(opener); i !== -1; i = text.indexOf(opener, i + 1)) if (++count > max) return false;
  }
  return true;
}

/**
 * Whether `text` nests objects/arrays deeper than `max`. Strings are skipped
 * with `indexOf`, so a frame that is mostly one long string costs little; a
 * frame with few brackets at all is not scanned.
 */
export function jsonDepthExceeds(text: string, max: number): boolean {
  if (openersAtMost(text, max)) return false;
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let j = text.indexOf('"', i + 1);
      while (j !== -1) {
        let slashes = 0;
        while (text.charCodeAt(j - 1 - slashes) === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
        j = text.indexOf('"', j + 1);
      }
      if (j === -1) return false;
      i = j;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/**
 * Decodes one text frame; throws `JsonRpcDecodeError` for anything malformed.
 * A frame nested deeper than {@link MAX_FRAME_DEPTH} is refused before it is
 * parsed (`recoverable`: the frame is simply not processed).
 */
export function decodeJsonRpc(text: string): JsonRpcFrame {
  if (jsonDepthExceeds(text, MAX_FRAME_DEPTH)) {
    throw new JsonRpcDecodeError(JsonRpcErrorCode.InvalidRequest, `frame nested deeper than ${MAX_FRAME_DEPTH} levels`, null, true);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new JsonRpcDecodeError(JsonRpcErrorCode.ParseError, 'parse error: invalid JSON');
  }
  if (!isRecord(value)) {
    throw new JsonRpcDecodeError(JsonRpcErrorCode.InvalidRequest, 'a frame must be one JSON object');
  }
  const id = readId(value.id);
  const echoId = id ?? null;
  if (value.jsonrpc !== undefined && value.jsonrpc !== '2.0') {
    throw new JsonRpcDecodeError(JsonRpcErrorCode.InvalidRequest, 'jsonrpc must be "2.0"', echoId);
  }
  const method = value.method;
  if (method !== undefined) {
    if (typeof method !== 'string' || method === '' || method.length > 64) {
      throw new JsonRpcDecodeError(JsonRpcErrorCode.InvalidRequest, 'method must be a string', echoId);
    }
    if (id === undefined || id === null) return { kind: 'notification', method, params: value.params };
    return { kind: 'request', id, method, params: value.params };
  }
  if (id === undefined) {
    throw new JsonRpcDecodeError(JsonRpcErrorCode.InvalidRequest, 'a frame needs a method or an id');
  }
  const hasResult = 'result' in value;
  const hasError = value.error !== undefined;
  if (hasResult === hasError) {
    throw new JsonRpcDecodeError(JsonRpcErrorCode.InvalidRequest, 'a response carries exactly one of result and error', echoId);
  }
  if (hasError) {
    const error = value.error;
    if (!isRecord(error) || typeof error.code !== 'number' || typeof error.message !== 'string') {
      throw new JsonRpcDecodeError(JsonRpcErrorCode.InvalidRequest, 'error must be {code, message}', echoId);
    }
    return { kind: 'response', id, error: { code: error.code, message: error.message, data: error.data } };
  }
  return { kind: 'response', id, result: value.result };
}

/** A success response. `result` must already be JSON-safe (no bigint). */
export function encodeResult(id: JsonRpcId, result: unknown): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result === undefined ? 'null' : JSON.stringify(result)}}`;
}

/**
 * The result of a `send`: the same text `encodeResult` gives for
 * `{messageId, message_id, messageSeq, message_seq, reasonCode, reason_code}`,
 * written out directly (once per message, no intermediate object).
 * `messageId` is the decimal id.
 */
export function encodeSendResult(id: JsonRpcId, messageId: string, messageSeq: number, reasonCode: number): string {
  return (
    `{"jsonrpc":"2.0","id":${typeof id === 'number' ? id : JSON.stringify(id)},"result":{"messageId":"${messageId}","message_id":"${messageId}",` +
    `"messageSeq":${messageSeq},"message_seq":${messageSeq},"reasonCode":${reasonCode},"reason_code":${reasonCode}}}`
  );
}

/** An error response; `id` is null when the request's id could not be read. */
export function encodeError(id: JsonRpcId | null, error: JsonRpcErrorObject): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error });
}

/** A server-to-client notification. */
export function encodeNotification(method: string, params: unknown): string {
  return `{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`;
}
