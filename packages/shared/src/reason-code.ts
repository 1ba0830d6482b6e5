/**
 * WuKongIM reason codes (uint8) as carried by SENDACK, CONNACK, DISCONNECT,
 * the JSON-RPC `reasonCode` and the HTTP send `reason`. Success is 1, not 0.
 */
export const ReasonCode = {
  Unknown: 0,
  Success: 1,
  AuthFail: 2,
  SubscriberNotExist: 3,
  InBlacklist: 4,
  ChannelNotExist: 5,
  UserNotOnNode: 6,
  SenderOffline: 7,
  MsgKeyError: 8,
  PayloadDecodeError: 9,
  ForwardSendPacketError: 10,
  NotAllowSend: 11,
  ConnectKick: 12,
  NotInWhitelist: 13,
  QueryTokenError: 14,
  SystemError: 15,
  ChannelIdError: 16,
  NodeMatchError: 17,
  NodeNotMatch: 18,
  Ban: 19,
  NotSupportHeader: 20,
  ClientKeyIsEmpty: 21,
  RateLimit: 22,
  NotSupportChannelType: 23,
  Disband: 24,
  SendBan: 25,
  ChannelDeleting: 26,
  ProtocolUpgradeRequired: 27,
  IdempotencyConflict: 28,
  MessageSeqExhausted: 29,
} as const;

export type ReasonCode = (typeof ReasonCode)[keyof typeof ReasonCode];

const names = new Map<number, string>(Object.entries(ReasonCode).map(([name, code]) => [code, `Reason${name}`]));

/** The Go-style name of a reason code (`ReasonAuthFail`), for error messages and logs. */
export function reasonName(code: number): string {
  return names.get(code) ?? `Reason${code}`;
}
