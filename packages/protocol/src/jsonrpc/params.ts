/**
 * Params of the JSON-RPC methods, read in both spellings (camelCase and
 * snake_case) and normalized to camelCase. Each reader throws
 * `InvalidParamsError` with a message naming the offending field.
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
}

export interface RecvackParams {
  header: JsonRpcHeader;
  messageId: string;
  messageSeq: number;
}

/** Longest string field accepted in params (uids, channel ids, keys), in characters. */
export const MAX_PARAM_STRING = 1024;

type Obj = Record<string, unknown>;

function asObject(params: unknown, method: string): Obj {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new InvalidParamsError(`${method} needs params as an object`);
  }
  return params as Obj;
}

function pick(p: Obj, camel: string, snake?: string): unknown {
  const v = p[camel];
  return v !== undefined || snake === undefined ? v : p[snake];
}

function str(p: Obj, camel: string, snake?: string, nullable = false): string {
  const v = pick(p, camel, snake);
  if (v === undefined || (nullable && v === null)) return '';
  if (typeof v !== 'string') throw new InvalidParamsError(`${camel} must be a string`);
  if (v.length > MAX_PARAM_STRING) throw new InvalidParamsError(`${camel} is too long`);
  return v;
}

function int(p: Obj, camel: string, snake: string | undefined, min: number, max: number): number {
  const v = pick(p, camel, snake);
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new InvalidParamsError(`${camel} must be an integer in ${min}..${max}`);
  }
  return v;
}

function flag(o: Obj, camel: string, snake?: string): boolean {
  const v = pick(o, camel, snake);
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new InvalidParamsError(`header.${camel} must be a boolean`);
  return v;
}

export function readHeader(p: Obj): JsonRpcHeader {
  const h = p.header;
  if (h === undefined || h === null) return { noPersist: false, redDot: false, syncOnce: false, dup: false, end: false };
  if (typeof h !== 'object' || Array.isArray(h)) throw new InvalidParamsError('header must be an object');
  const o = h as Obj;
  return {
    noPersist: flag(o, 'noPersist', 'no_persist'),
    redDot: flag(o, 'redDot', 'red_dot'),
    syncOnce: flag(o, 'syncOnce', 'sync_once'),
    dup: flag(o, 'dup'),
    end: flag(o, 'end'),
  };
}

function readSetting(p: Obj): number {
  const s = p.setting;
  if (s === undefined || s === null) return 0;
  if (typeof s !== 'object' || Array.isArray(s)) throw new InvalidParamsError('setting must be an object');
  const o = s as Obj;
  let bits = 0;
  for (const name of ['receipt', 'signal', 'stream', 'topic'] as const) {
    const v = o[name];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'boolean') throw new InvalidParamsError(`setting.${name} must be a boolean`);
    if (v) bits |= SettingBit[name];
  }
  return bits;
}

export function readConnectParams(params: unknown): ConnectParams {
  const p = asObject(params, 'connect');
  return {
    header: readHeader(p),
    version: int(p, 'version', undefined, 0, 255),
    clientKey: str(p, 'clientKey', 'client_key'),
    deviceId: str(p, 'deviceId', 'device_id', true),
    deviceFlag: int(p, 'deviceFlag', 'device_flag', 0, 255),
    clientTimestamp: int(p, 'clientTimestamp', 'client_timestamp', -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
    uid: str(p, 'uid'),
    token: str(p, 'token'),
  };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const encoder = new TextEncoder();

/**
 * A send payload: a string that is valid JSON text is taken as those UTF-8
 * bytes, any other string as standard Base64; an object as its JSON; null or
 * absent as empty (the send then fails with reason 9).
 */
export function readPayload(value: unknown): Uint8Array {
  if (value === undefined || value === null) return new Uint8Array(0);
  if (typeof value === 'string') {
    try {
      JSON.parse(value);
      return encoder.encode(value);
    } catch {
      if (!BASE64.test(value)) throw new InvalidParamsError('payload must be JSON text or standard Base64');
      return Buffer.from(value, 'base64');
    }
  }
  if (typeof value === 'object') return encoder.encode(JSON.stringify(value));
  throw new InvalidParamsError('payload must be a string, an object or null');
}

export function readSendParams(params: unknown): SendParams {
  const p = asObject(params, 'send');
  return {
    header: readHeader(p),
    setting: readSetting(p),
    msgKey: str(p, 'msgKey', 'msg_key'),
    expire: int(p, 'expire', undefined, 0, 4_294_967_295),
    clientMsgNo: str(p, 'clientMsgNo', 'client_msg_no'),
    streamNo: str(p, 'streamNo', 'stream_no'),
    channelId: str(p, 'channelId', 'channel_id'),
    channelType: int(p, 'channelType', 'channel_type', 0, 255),
    topic: str(p, 'topic'),
    payload: readPayload(p.payload),
  };
}

export function readRecvackParams(params: unknown): RecvackParams {
  const p = asObject(params, 'recvack');
  return {
    header: readHeader(p),
    messageId: str(p, 'messageId', 'message_id'),
    messageSeq: int(p, 'messageSeq', 'message_seq', 0, Number.MAX_SAFE_INTEGER),
  };
}

/** `ping` params: absent, null or an object. */
export function checkPingParams(params: unknown): void {
  if (params === undefined || params === null) return;
  if (typeof params !== 'object' || Array.isArray(params)) throw new InvalidParamsError('ping params must be an object or null');
}
