import { compactRecvackMessageId } from '@parley/protocol/jsonrpc';
import type { WebSocket } from 'ws';

/**
 * What this module reads of a ws `Receiver` (ws 8): a Writable whose
 * `write` the socket's `data` listener calls with every chunk, and the
 * parse state that says whether it is between two messages.
 */
interface WsReceiver {
  write(chunk: Buffer): boolean;
  writableLength: number;
  _state: number;
  _bufferedBytes: number;
  _fragmented: number;
  _errored: boolean;
  _maxPayload: number;
}

/** The receiver's state between two frames (`GET_INFO`). */
const GET_INFO = 0;
/** First byte of an unfragmented text frame: FIN, no RSV bits, opcode 1. */
const FIN_TEXT = 0x81;
/** Largest payload of a compact recvack (see `compactRecvackMessageId`), bytes. */
const MAX_RECVACK_BYTES = 120;
/** Most frames read from one chunk on this path (a client acks a burst of RECVs at once). */
const MAX_FRAMES = 64;

/** Unmasked text of the frames of one chunk (reused: one JavaScript thread, no re-entry). */
const scratch = Buffer.alloc(MAX_RECVACK_BYTES);
const ids: string[] = [];

/**
 * The message ids of `chunk` when it is nothing but whole, masked,
 * unfragmented text frames that are each a compact `recvack`; else
 * undefined, and `chunk` is left untouched for ws to parse.
 */
export function compactRecvacksOf(chunk: Buffer, maxPayload: number): string[] | undefined {
  ids.length = 0;
  const n = chunk.length;
  let at = 0;
  while (at < n) {
    if (ids.length === MAX_FRAMES || n - at < 6 || chunk[at] !== FIN_TEXT) return undefined;
    const b1 = chunk[at + 1]!;
    const len = b1 & 0x7f;
    // A client frame is masked; 126 and 127 announce longer lengths than a recvack has.
    if ((b1 & 0x80) === 0 || len > MAX_RECVACK_BYTES || (maxPayload > 0 && len > maxPayload)) return undefined;
    const data = at + 6;
    if (n - data < len) return undefined;
    for (let i = 0; i < len; i++) scratch[i] = chunk[data + i]! ^ chunk[at + 2 + (i & 3)]!;
    const id = compactRecvackMessageId(scratch.toString('latin1', 0, len));
    if (id === undefined) return undefined;
    ids.push(id);
    at = data + len;
  }
  return ids.length > 0 ? ids : undefined;
}

/**
 * Lets an authenticated JSON-RPC connection take its `recvack`s without ws's
 * frame parser, message events and UTF-8 decoding: a socket chunk that is
 * only whole compact recvacks (the usual case: one per delivered message)
 * and arrives between two messages is read here, each id handed to `onAck`
 * in order. Any other chunk, and every chunk while ws holds part of a
 * message, goes to ws unchanged, so frames are still handled in the order
 * they came. A compact recvack is ASCII (valid UTF-8) and below any frame
 * limit, so ws would have accepted it and emitted the same text.
 *
 * Relies on ws 8's receiver internals; when they are not as expected the
 * connection simply keeps the ordinary path.
 */
export function takeRecvacksBeforeWs(ws: WebSocket, onAck: (messageId: string) => void): boolean {
  const receiver = (ws as unknown as { _receiver?: WsReceiver })._receiver;
  if (
    !receiver ||
    typeof receiver.write !== 'function' ||
    receiver._state !== GET_INFO ||
    typeof receiver._bufferedBytes !== 'number' ||
    typeof receiver._fragmented !== 'number' ||
    typeof receiver._maxPayload !== 'number'
  ) {
    return false;
  }
  const write = receiver.write.bind(receiver);
  receiver.write = (chunk: Buffer): boolean => {
    if (
      receiver._state === GET_INFO &&
      receiver._bufferedBytes === 0 &&
      receiver._fragmented === 0 &&
      !receiver._errored &&
      receiver.writableLength === 0 &&
      ws.readyState === ws.OPEN
    ) {
      const acks = compactRecvacksOf(chunk, receiver._maxPayload);
      if (acks) {
        for (const id of acks) onAck(id);
        return true;
      }
    }
    return write(chunk);
  };
  return true;
}
