import { Type, type TSchema } from '@sinclair/typebox';

/**
 * Params of the JSON-RPC methods a client sends (`connect`, `send`,
 * `recvack`, `ping`), each field in both spellings the SDKs use (camelCase
 * and snake_case; camelCase wins when both are present). Absent fields take
 * their zero value, and so does `null` where a client may send it. Every
 * field carries `field`, the name a refusal gives it.
 */

/** Longest string field accepted in params (uids, channel ids, keys), in characters. */
export const MAX_PARAM_STRING = 1024;

const field = (name: string) => ({ field: name });
const nullable = <T extends TSchema>(t: T) => Type.Optional(Type.Union([t, Type.Null()], field(String(t.field))));
const str = (name: string) => Type.Optional(Type.String({ maxLength: MAX_PARAM_STRING, ...field(name) }));
const int = (name: string, minimum: number, maximum: number) => nullable(Type.Integer({ minimum, maximum, ...field(name) }));
const flag = (name: string) => nullable(Type.Boolean(field(`header.${name}`)));

/** Both spellings of one field. */
function both<T extends TSchema>(camel: string, snake: string, make: (name: string) => T): Record<string, T> {
  return { [camel]: make(camel), [snake]: make(camel) };
}

/** Frame header flags (all optional booleans). */
export const JsonRpcHeaderParams = Type.Object({
  ...both('noPersist', 'no_persist', flag),
  ...both('redDot', 'red_dot', flag),
  ...both('syncOnce', 'sync_once', flag),
  dup: flag('dup'),
  end: flag('end'),
});

const header = Type.Optional(Type.Union([JsonRpcHeaderParams, Type.Null()], field('header')));

export const ConnectParams = Type.Object(
  {
    header,
    version: int('version', 0, 255),
    ...both('clientKey', 'client_key', str),
    ...both('deviceId', 'device_id', (name) =>
      Type.Optional(Type.Union([Type.String({ maxLength: MAX_PARAM_STRING, ...field(name) }), Type.Null()], field(name))),
    ),
    ...both('deviceFlag', 'device_flag', (name) => int(name, 0, 255)),
    ...both('clientTimestamp', 'client_timestamp', (name) => int(name, -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)),
    uid: str('uid'),
    token: str('token'),
  },
  field('connect'),
);

/** `setting` flags of a send; each sets its bit in the WKProto setting byte. */
export const SendSettingParams = Type.Object({
  receipt: nullable(Type.Boolean(field('setting.receipt'))),
  signal: nullable(Type.Boolean(field('setting.signal'))),
  stream: nullable(Type.Boolean(field('setting.stream'))),
  topic: nullable(Type.Boolean(field('setting.topic'))),
});

/** A send payload: JSON text or standard Base64 as a string, a JSON object or array, or null (empty). */
const Payload = Type.Optional(
  Type.Union([Type.String(), Type.Object({}), Type.Array(Type.Unknown()), Type.Null()], {
    field: 'payload',
    message: 'payload must be a string, an object or null',
  }),
);

export const SendParams = Type.Object(
  {
    header,
    setting: Type.Optional(Type.Union([SendSettingParams, Type.Null()], field('setting'))),
    ...both('msgKey', 'msg_key', str),
    expire: int('expire', 0, 4_294_967_295),
    ...both('clientMsgNo', 'client_msg_no', str),
    ...both('streamNo', 'stream_no', str),
    ...both('channelId', 'channel_id', str),
    ...both('channelType', 'channel_type', (name) => int(name, 0, 255)),
    topic: str('topic'),
    payload: Payload,
  },
  field('send'),
);

export const RecvackParams = Type.Object(
  {
    header,
    ...both('messageId', 'message_id', str),
    ...both('messageSeq', 'message_seq', (name) => int(name, 0, Number.MAX_SAFE_INTEGER)),
  },
  field('recvack'),
);

/** `ping` params: absent, null or an object. */
export const PingParams = Type.Union([Type.Object({}), Type.Null()], { field: 'ping', message: 'ping params must be an object or null' });
