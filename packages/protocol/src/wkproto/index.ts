/**
 * Public API of the binary WKProto library: packet types and codec, the
 * streaming decoder for the server hot path, session crypto, and a small client.
 */
export * from './constants.ts';
export * from './errors.ts';
export type * from './types.ts';
export { encodePacket, encodeRecvack, encodeSendack, flagBits } from './encode.ts';
export { decodeBody, decodePacket, flagsOf } from './decode.ts';
export { readFrameHeader, varintSize, writeVarint, type FrameHeader } from './varint.ts';
export { WkprotoDecoder, type PacketHandler, type RawBodyHandler, type WkprotoDecoderOptions } from './stream-decoder.ts';
export { checkRecvackBody, recvackMessageIdText } from './recvack-view.ts';
export {
  clientKeyExchange,
  deriveAesKey,
  generateKeyPair,
  keyPairFromPrivate,
  randomSalt,
  recvTemplate,
  sealedPayloadBytes,
  serverKeyExchange,
  sharedSecret,
  WkSessionCrypto,
  wkcryptoImplementation,
  type RecvSignFields,
  type RecvTemplate,
  type SendSignFields,
  type ServerKeyExchange,
  type WkKeyPair,
  type WkcryptoImplementation,
} from './crypto.ts';
export { WkprotoClient, WkprotoConnectError, type ClientSendOptions, type ReceivedMessage, type WkprotoClientOptions } from './client.ts';
export { recvBatchEnabled, recvBatchStats, setRecvBatchEnabled } from './recv-batch.ts';
