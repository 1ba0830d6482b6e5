import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import { takeReads } from './direct-write.ts';

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

/** The bytes of a compact recvack before its message id, and between the id and its message_seq (see `compactRecvackMessageId`). */
const HEAD = Buffer.from('{"jsonrpc":"2.0","method":"recvack","params":{"messageId":"', 'latin1');
const MIDDLE = Buffer.from('","messageSeq":', 'latin1');
/** Most digits of a message id and of a message_seq in a compact recvack. */
const MAX_ID_DIGITS = 20;
const MAX_SEQ_DIGITS = 15;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const CLOSE_BRACE = 0x7d;
/** The shortest compact recvack: a one-digit id and message_seq. */
const SHORTEST = HEAD.length + 1 + MIDDLE.length + 1 + 2;

/**
 * One frame's payload, unmasked (reused: one JavaScript thread, no
 * re-entry). Unmasking and the comparison of the fixed head go four bytes
 * at a time, little-endian through DataViews whatever the host's order: a
 * typed array costs tens of instructions per element read here.
 */
const text = Buffer.alloc(MAX_RECVACK_BYTES + 4) as Buffer & { latin1Slice(start: number, end: number): string };
const textView = new DataView(text.buffer, text.byteOffset, text.length);
/**
 * Whole four-byte words of HEAD, little-endian, as signed 32-bit values (what
 * `^` yields): compared with the masked bytes in place, word by word, so only
 * what follows them is unmasked into `text`. The rest of HEAD is checked byte
 * by byte.
 */
const HEAD_WORDS = Array.from({ length: HEAD.length >> 2 }, (_, k) => HEAD.readInt32LE(4 * k));
const HEAD_WHOLE = HEAD_WORDS.length * 4;
const ids: string[] = [];

/**
 * The message ids of `chunk` when it is nothing but whole, masked,
 * unfragmented text frames that are each a compact `recvack`; else
 * undefined, and `chunk` is left untouched for ws to parse. Each payload is
 * checked against exactly `compactRecvackMessageId`'s grammar, in place of
 * that regular expression; only the id's digits become a string.
 */
export function compactRecvacksOf(chunk: Buffer, maxPayload: number): string[] | undefined {
  ids.length = 0;
  const n = chunk.length;
  let view: DataView | undefined;
  let at = 0;
  while (at < n) {
    if (ids.length === MAX_FRAMES || n - at < 6 || chunk[at] !== FIN_TEXT) return undefined;
    const b1 = chunk[at + 1]!;
    const len = b1 & 0x7f;
    // A client frame is masked; 126 and 127 announce longer lengths than a recvack has.
    if ((b1 & 0x80) === 0 || len > MAX_RECVACK_BYTES || len < SHORTEST || (maxPayload > 0 && len > maxPayload)) return undefined;
    const data = at + 6;
    if (n - data < len) return undefined;
    view ??= new DataView(chunk.buffer, chunk.byteOffset, n);
    const key = view.getUint32(at + 2, true);
    for (let k = 0, i = 0; k < HEAD_WORDS.length; k++, i += 4)
      if ((view.getUint32(data + i, true) ^ key) !== HEAD_WORDS[k]) return undefined;
    const whole = len & ~3;
    for (let i = HEAD_WHOLE; i < whole; i += 4) textView.setUint32(i, view.getUint32(data + i, true) ^ key, true);
    for (let i = whole; i < len; i++) text[i] = chunk[data + i]! ^ chunk[at + 2 + (i & 3)]!;
    if (!isCompactRecvack(len)) return undefined;
    ids.push(text.latin1Slice(HEAD.length, HEAD.length + idDigits));
    at = data + len;
  }
  return ids.length > 0 ? ids : undefined;
}

/** Digits of the message id of the last payload `isCompactRecvack` accepted. */
let idDigits = 0;

/** Whether the `len` bytes in `text` are a compact recvack (setting `idDigits`). */
function isCompactRecvack(len: number): boolean {
  // HEAD's whole words were compared before unmasking.
  let i = HEAD_WHOLE;
  for (; i < HEAD.length; i++) if (text[i] !== HEAD[i]) return false;
  let c = text[i]!;
  while (c >= DIGIT_0 && c <= DIGIT_9 && i < len) c = text[++i]!;
  idDigits = i - HEAD.length;
  if (idDigits === 0 || idDigits > MAX_ID_DIGITS || len - i < MIDDLE.length + 3) return false;
  for (let k = 0; k < MIDDLE.length; k++, i++) if (text[i] !== MIDDLE[k]) return false;
  // message_seq: 0, or up to 15 digits without a leading zero.
  const first = text[i++]!;
  if (first < DIGIT_0 || first > DIGIT_9) return false;
  if (first !== DIGIT_0) {
    const from = i - 1;
    c = text[i]!;
    while (c >= DIGIT_0 && c <= DIGIT_9 && i < len) c = text[++i]!;
    if (i - from > MAX_SEQ_DIGITS) return false;
  }
  return len - i === 2 && text[i] === CLOSE_BRACE && text[i + 1] === CLOSE_BRACE;
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
  const idle = (): boolean =>
    receiver._state === GET_INFO &&
    receiver._bufferedBytes === 0 &&
    receiver._fragmented === 0 &&
    !receiver._errored &&
    receiver.writableLength === 0 &&
    ws.readyState === ws.OPEN;
  const write = receiver.write.bind(receiver);
  receiver.write = (chunk: Buffer): boolean => {
    if (idle()) {
      const acks = compactRecvacksOf(chunk, receiver._maxPayload);
      if (acks) {
        for (const id of acks) onAck(id);
        return true;
      }
    }
    return write(chunk);
  };
  takeReadsBeforeStream(ws, idle, receiver._maxPayload, onAck);
  return true;
}

/**
 * One step earlier still (see `takeReads`): a read of the socket that is only
 * whole compact recvacks is taken before Node's Readable machinery and ws's
 * `data` listener see it, when ws is between two messages.
 */
function takeReadsBeforeStream(ws: WebSocket, idle: () => boolean, maxPayload: number, onAck: (messageId: string) => void): void {
  const socket = (ws as unknown as { _socket?: Socket })._socket;
  if (!socket) return;
  takeReads(socket, (chunk) => {
    if (!idle()) return false;
    const acks = compactRecvacksOf(chunk, maxPayload);
    if (!acks) return false;
    for (const id of acks) onAck(id);
    return true;
  });
}
