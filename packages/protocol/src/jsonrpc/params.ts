import { Buffer } from 'node:buffer';
import { ConnectParams as ConnectSchema, PingParams, RecvackParams as RecvackSchema, SendParams as SendSchema } from '@parley/shared';
import { KindGuard, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';

/**
 * Params of the JSON-RPC methods, checked against their schemas in
 * `packages/shared` (both spellings, camelCase and snake_case) and normalized
 * to camelCase. Each reader throws `InvalidParamsError` with a message naming
 * the offending field.
 */

export class InvalidParamsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidParamsError';
  }
}

/** Frame header flags (all optional booleans on the wire). */
export interface JsonRpcHeader {
  noPersist: boolean;
  redDot: boolean;
  syncOnce: boolean;
  dup: boolean;
  end: boolean;
}

/** Setting flags and their bits in the WKProto setting byte. */
export const SettingBit = { receipt: 0x80, signal: 0x20, noEncrypt: 0x10, topic: 0x08, stream: 0x02 } as const;

export interface ConnectParams {
  header: JsonRpcHeader;
  version: number;
  clientKey: string;
  deviceId: string;
  deviceFlag: number;
  clientTimestamp: number;
  uid: string;
  token: string;
}

export interface SendParams {
  header: JsonRpcHeader;
  setting: number;
  msgKey: string;
  expire: number;
  clientMsgNo: string;
  streamNo: string;
  channelId: string;
  channelType: number;
  topic: string;
  payload: Uint8Array;
  /**
   * The payload's text inside a `recv` (see `recvPayloadJson`) when the send
   * already shows it: a payload given as a JSON object, or as a string of
   * JSON object text. Undefined otherwise (then it is derived from the bytes).
   */
  payloadJson: string | undefined;
}

export interface RecvackParams {
  header: JsonRpcHeader;
  messageId: string;
  messageSeq: number;
}

/** Longest string field accepted in params, in characters. */
export { MAX_PARAM_STRING } from '@parley/shared';

type Obj = Record<string, unknown>;

const checkConnect = TypeCompiler.Compile(ConnectSchema);
const checkSend = TypeCompiler.Compile(SendSchema);
const checkRecvack = TypeCompiler.Compile(RecvackSchema);
const checkPing = TypeCompiler.Compile(PingParams);

/** What a refusal says about `value` against `schema`: the first field that fails, by the name its schema gives it. */
function problem(schema: TSchema, value: unknown): string {
  if (KindGuard.IsObject(schema) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [key, sub] of Object.entries(schema.properties)) {
      const v = (value as Obj)[key];
      if (v === undefined && !schema.required?.includes(key)) continue;
      if (!Value.Check(sub, v)) return problem(sub, v);
    }
  }
  if (typeof schema.message === 'string') return schema.message;
  const name = String(schema.field);
  const inner = KindGuard.IsUnion(schema) ? (schema.anyOf.find((s) => !KindGuard.IsNull(s)) ?? schema) : schema;
  if (KindGuard.IsObject(inner)) {
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? problem(inner, value) : `${name} must be an object`;
  }
  if (KindGuard.IsString(inner)) return typeof value === 'string' ? `${name} is too long` : `${name} must be a string`;
  if (KindGuard.IsInteger(inner)) return `${name} must be an integer in ${inner.minimum}..${inner.maximum}`;
  if (KindGuard.IsBoolean(inner)) return `${name} must be a boolean`;
  return `${name} is invalid`;
}

/** `params` as an object that passed `check`; otherwise the refusal naming the first field that fails. */
function checked(check: TypeCheck<TSchema>, params: unknown, method: string): Obj {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new InvalidParamsError(`${method} needs params as an object`);
  }
  if (!check.Check(params)) throw new InvalidParamsError(problem(check.Schema(), params));
  return params as Obj;
}

/** The value of a field in either spelling (camelCase first); null counts as absent. */
function pick(p: Obj, camel: string, snake?: string): unknown {
  const v = p[camel] ?? (snake === undefined ? undefined : p[snake]);
  return v === null ? undefined : v;
}

const str = (p: Obj, camel: string, snake?: string): string => (pick(p, camel, snake) as string | undefined) ?? '';
const int = (p: Obj, camel: string, snake?: string): number => (pick(p, camel, snake) as number | undefined) ?? 0;
const flag = (o: Obj, camel: string, snake?: string): boolean => (pick(o, camel, snake) as boolean | undefined) ?? false;

/** The header of checked params. */
function readHeader(p: Obj): JsonRpcHeader {
  const h = p.header;
  if (h === undefined || h === null) return { noPersist: false, redDot: false, syncOnce: false, dup: false, end: false };
  const o = h as Obj;
  return {
    noPersist: flag(o, 'noPersist', 'no_persist'),
    redDot: flag(o, 'redDot', 'red_dot'),
    syncOnce: flag(o, 'syncOnce', 'sync_once'),
    dup: flag(o, 'dup'),
    end: flag(o, 'end'),
  };
}

/** The setting byte of checked send params. */
function readSetting(p: Obj): number {
  const s = p.setting;
  if (s === undefined || s === null) return 0;
  let bits = 0;
  for (const name of ['receipt', 'signal', 'stream', 'topic'] as const) if ((s as Obj)[name] === true) bits |= SettingBit[name];
  return bits;
}

/** `connect` params, checked against the shared `ConnectParams` schema. */
export function readConnectParams(params: unknown): ConnectParams {
  const p = checked(checkConnect, params, 'connect');
  return {
    header: readHeader(p),
    version: int(p, 'version'),
    clientKey: str(p, 'clientKey', 'client_key'),
    deviceId: str(p, 'deviceId', 'device_id'),
    deviceFlag: int(p, 'deviceFlag', 'device_flag'),
    clientTimestamp: int(p, 'clientTimestamp', 'client_timestamp'),
    uid: str(p, 'uid'),
    token: str(p, 'token'),
  };
}

/** Standard Base64 with its padding, as a send payload string that is not JSON text must be. */
export const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The UTF-8 bytes of a payload's text. `Buffer.from` takes small texts from
 * Node's shared allocation pool: a view, where `TextEncoder.encode` creates an
 * ArrayBuffer of its own per payload (several times the cost of the copy). A
 * lone surrogate becomes U+FFFD either way. The writer thread's structured
 * clone copies each pool slab a batch's payloads share once.
 */
const utf8Bytes = (text: string): Uint8Array => Buffer.from(text, 'utf8');

/** A payload read from `send` params: its bytes and, when known, its `recv` text. */
interface ReadPayload {
  bytes: Uint8Array;
  json: string | undefined;
}

/** A UTF-16 surrogate without its pair (a `u` regex reads a pair as one code point). */
const LONE_SURROGATE = /\p{Cs}/u;

const isJsonObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A send payload: a string that is valid JSON text is taken as those UTF-8
 * bytes, any other string as standard Base64; an object as its JSON; null or
 * absent as empty (the send then fails with reason 9). `json` is the text a
 * `recv` carries for these bytes when it is plain from the input: exactly
 * what `recvPayloadJson(bytes)` returns, without decoding and parsing again.
 */
function readPayloadAndJson(value: unknown): ReadPayload {
  if (value === undefined || value === null) return { bytes: new Uint8Array(0), json: undefined };
  if (typeof value === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      if (!BASE64.test(value)) throw new InvalidParamsError('payload must be JSON text or standard Base64');
      return { bytes: Buffer.from(value, 'base64'), json: undefined };
    }
    // A lone surrogate would not survive UTF-8: then the bytes, not the string, decide the recv text.
    return { bytes: utf8Bytes(value), json: isJsonObject(parsed) && !LONE_SURROGATE.test(value) ? value : undefined };
  }
  if (typeof value === 'object') {
    const text = JSON.stringify(value);
    return { bytes: utf8Bytes(text), json: Array.isArray(value) ? undefined : text };
  }
  throw new InvalidParamsError('payload must be a string, an object or null');
}

/** A send payload's bytes (as `readPayloadAndJson` reads them). */
export function readPayload(value: unknown): Uint8Array {
  return readPayloadAndJson(value).bytes;
}

/**
 * `send` params, checked against the shared `SendParams` schema. Each field is
 * read by name, as `str`/`int` would read it (camelCase, then snake_case, null
 * as absent): once per message, and a named read of a field that is there, or
 * of one that is not, is an inline-cached load, where `pick`'s `p[key]`, shared
 * by every field and method, is a megamorphic keyed look-up each time.
 */
export function readSendParams(params: unknown): SendParams {
  const p = checked(checkSend, params, 'send') as SendFields;
  const payload = readPayloadAndJson(p.payload);
  return {
    header: readHeader(p),
    setting: readSetting(p),
    msgKey: p.msgKey ?? p.msg_key ?? '',
    expire: p.expire ?? 0,
    clientMsgNo: p.clientMsgNo ?? p.client_msg_no ?? '',
    streamNo: p.streamNo ?? p.stream_no ?? '',
    channelId: p.channelId ?? p.channel_id ?? '',
    channelType: p.channelType ?? p.channel_type ?? 0,
    topic: p.topic ?? '',
    payload: payload.bytes,
    payloadJson: payload.json,
  };
}

/** The fields `readSendParams` reads, as the schema lets them be (a null is read as absent). */
interface SendFields extends Obj {
  payload?: unknown;
  msgKey?: string | null;
  msg_key?: string | null;
  expire?: number | null;
  clientMsgNo?: string | null;
  client_msg_no?: string | null;
  streamNo?: string | null;
  stream_no?: string | null;
  channelId?: string | null;
  channel_id?: string | null;
  channelType?: number | null;
  channel_type?: number | null;
  topic?: string | null;
}

/** `recvack` params, checked against the shared `RecvackParams` schema. */
export function readRecvackParams(params: unknown): RecvackParams {
  const p = checked(checkRecvack, params, 'recvack');
  return {
    header: readHeader(p),
    messageId: str(p, 'messageId', 'message_id'),
    messageSeq: int(p, 'messageSeq', 'message_seq'),
  };
}

/**
 * The message id of `recvack` params, checked as `readRecvackParams` checks
 * them (same refusals), without building the header and params objects the
 * gateway does not read: one call per delivered message.
 */
export function readRecvackMessageId(params: unknown): string {
  return str(checked(checkRecvack, params, 'recvack'), 'messageId', 'message_id');
}

/** `ping` params: absent, null or an object. */
export function checkPingParams(params: unknown): void {
  if (params !== undefined && !checkPing.Check(params)) throw new InvalidParamsError(problem(PingParams, params));
}
