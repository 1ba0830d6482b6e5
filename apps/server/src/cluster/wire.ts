import { Buffer } from 'node:buffer';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ERROR_CODES } from '@parley/shared';
import { Delivery } from '../messaging/delivery.ts';
import type { SendCommand, SendOutcome } from '../messaging/send.service.ts';

/**
 * What crosses the bus between nodes, as JSON: forwarded sends, their
 * outcomes, and deliveries. Bytes travel as base64 and 64-bit ids as decimal
 * strings (never JS numbers). Every body is checked against its schema when
 * it arrives.
 */

const Uid = Type.String({ maxLength: 1024 });
const Text = Type.String({ maxLength: 4096 });
/** Bound on a payload's base64 text (the bus message limit is lower anyway). */
const Base64 = Type.String({ maxLength: 1_400_000 });
const DecimalId = Type.String({ pattern: '^[0-9]{1,20}$' });
const Int = Type.Integer({ minimum: -2147483648, maximum: 2147483647 });

/** The session that sent a message, on the node it is connected to: it gets no RECV echo. */
export const SenderRef = Type.Object({ node: Type.Integer({ minimum: 1, maximum: 1023 }), session: Type.Integer({ minimum: 0 }) });
export type SenderRef = Static<typeof SenderRef>;

export const ForwardedSend = Type.Object({
  fromUid: Uid,
  deviceId: Text,
  channelId: Text,
  channelType: Int,
  payload: Base64,
  clientMsgNo: Text,
  setting: Int,
  topic: Text,
  expire: Type.Integer({ minimum: 0 }),
  redDot: Type.Boolean(),
  syncOnce: Type.Boolean(),
  noPersist: Type.Boolean(),
  subscribers: Type.Optional(Type.Array(Uid, { maxItems: 100_000 })),
  origin: Type.Optional(SenderRef),
});
export type ForwardedSend = Static<typeof ForwardedSend>;

export const ForwardReply = Type.Union([
  Type.Object({
    reason: Int,
    messageId: DecimalId,
    messageSeq: Type.Integer({ minimum: 0 }),
    refusal: Type.Optional(
      Type.Object({
        code: Type.Union(ERROR_CODES.map((c) => Type.Literal(c))),
        status: Type.Integer({ minimum: 400, maximum: 599 }),
        message: Text,
      }),
    ),
  }),
  /** The receiving node does not (or no longer) own the channel's slot: ask again. */
  Type.Object({ notOwner: Type.Literal(true) }),
  Type.Object({ error: Text }),
]);
export type ForwardReply = Static<typeof ForwardReply>;

export function encodeSend(cmd: SendCommand, origin: SenderRef | undefined): ForwardedSend {
  return {
    fromUid: cmd.fromUid,
    deviceId: cmd.deviceId,
    channelId: cmd.channelId,
    channelType: cmd.channelType,
    payload: Buffer.from(cmd.payload).toString('base64'),
    clientMsgNo: cmd.clientMsgNo,
    setting: cmd.setting,
    topic: cmd.topic,
    expire: cmd.expire,
    redDot: cmd.redDot,
    syncOnce: cmd.syncOnce,
    noPersist: cmd.noPersist,
    ...(cmd.subscribers ? { subscribers: [...cmd.subscribers] } : {}),
    ...(origin ? { origin } : {}),
  };
}

/** A forwarded send as a command, or undefined when the body does not match its schema. */
export function decodeSend(body: unknown): { cmd: SendCommand; origin: SenderRef | undefined } | undefined {
  if (!Value.Check(ForwardedSend, body)) return undefined;
  const { payload, origin, subscribers, ...rest } = body;
  return {
    cmd: { ...rest, payload: Buffer.from(payload, 'base64'), ...(subscribers ? { subscribers } : {}) },
    origin,
  };
}

export function encodeOutcome(o: SendOutcome): ForwardReply {
  return { reason: o.reason, messageId: o.messageId.toString(), messageSeq: o.messageSeq, ...(o.refusal ? { refusal: o.refusal } : {}) };
}

export function decodeReply(body: unknown): SendOutcome | 'not_owner' | { error: string } {
  if (!Value.Check(ForwardReply, body)) return { error: 'forward reply with an unexpected shape' };
  if ('notOwner' in body) return 'not_owner';
  if ('error' in body) return { error: body.error };
  return {
    reason: body.reason,
    messageId: BigInt(body.messageId),
    messageSeq: body.messageSeq,
    ...(body.refusal ? { refusal: body.refusal } : {}),
  };
}

export const RemoteDelivery = Type.Object({
  id: DecimalId,
  seq: Type.Integer({ minimum: 0 }),
  clientMsgNo: Text,
  fromUid: Uid,
  channelId: Text,
  channelType: Int,
  timestamp: Type.Integer({ minimum: 0 }),
  payload: Base64,
  setting: Int,
  topic: Text,
  expire: Type.Integer({ minimum: 0 }),
  redDot: Type.Boolean(),
  syncOnce: Type.Boolean(),
  noPersist: Type.Boolean(),
  /** The recipients with sessions on the receiving node. */
  uids: Type.Array(Uid, { maxItems: 100_000 }),
  exclude: Type.Optional(SenderRef),
});
export type RemoteDelivery = Static<typeof RemoteDelivery>;

export function encodeDelivery(d: Delivery, uids: string[], exclude: SenderRef | undefined): RemoteDelivery {
  return {
    id: d.messageIdText,
    seq: d.messageSeq,
    clientMsgNo: d.clientMsgNo,
    fromUid: d.fromUid,
    channelId: d.channelId,
    channelType: d.channelType,
    timestamp: d.timestamp,
    payload: Buffer.from(d.payload).toString('base64'),
    setting: d.setting,
    topic: d.topic,
    expire: d.expire,
    redDot: d.redDot,
    syncOnce: d.syncOnce,
    noPersist: d.noPersist,
    uids,
    ...(exclude ? { exclude } : {}),
  };
}

export function decodeDelivery(body: unknown): { delivery: Delivery; uids: string[]; exclude: SenderRef | undefined } | undefined {
  if (!Value.Check(RemoteDelivery, body)) return undefined;
  const b = body;
  const delivery = new Delivery(
    BigInt(b.id),
    b.seq,
    b.clientMsgNo,
    b.fromUid,
    b.channelId,
    b.channelType,
    b.timestamp,
    Buffer.from(b.payload, 'base64'),
    b.setting,
    b.topic,
    b.expire,
    b.redDot,
    b.syncOnce,
    b.noPersist,
  );
  return { delivery, uids: b.uids, exclude: b.exclude };
}
