import type { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import { takeReads } from '@parley/protocol/net';
import { compactRecvacksOf, type RecvackSlot } from './ws-recvack.ts';
import { asciiTextFramesOf } from './ws-text.ts';

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

/**
 * Lets an authenticated JSON-RPC connection take its inbound messages
 * without ws's frame parser, message events, buffer views and UTF-8
 * decoding, and, where the socket's reads can be taken at its handle
 * (`takeReads`), without Node's Readable machinery and ws's `data` listener
 * as well. A read (or, on the ordinary path, a chunk ws's receiver is
 * given) that arrives between two messages and is only whole compact
 * recvacks (`compactRecvacksOf`: one per delivered message, often a burst)
 * has each id handed to `onAck`; one that is only whole ASCII text frames
 * (`asciiTextFramesOf`: a `send`, a few) has each text handed to `onText`,
 * in order, while the connection is open (the rest of a read is dropped once
 * it is not, as the session would ignore it). Anything else (a control
 * frame, a fragment, binary, non-ASCII text, a frame cut across reads), and
 * everything while ws holds part of a message, goes on to ws unchanged, so
 * frames are still handled in the order they came and ws still answers
 * pings and closes. Such frames are valid UTF-8 within every limit ws
 * checks, so ws would have emitted exactly these texts.
 *
 * Relies on ws 8's receiver internals; when they are not as expected the
 * connection simply keeps the ordinary path (false).
 */
export function takeJsonRpcReadsBeforeWs(ws: WebSocket, onAck: RecvackSlot, onText: (text: string) => void): boolean {
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
  const maxPayload = receiver._maxPayload;
  /** Takes `chunk[start, stop)` when it is one of the two kinds and ws is between two messages. */
  const take = (chunk: Buffer, start: number, stop: number, view: DataView | undefined): boolean => {
    if (
      receiver._state !== GET_INFO ||
      receiver._bufferedBytes !== 0 ||
      receiver._fragmented !== 0 ||
      receiver._errored ||
      receiver.writableLength !== 0 ||
      ws.readyState !== ws.OPEN
    ) {
      return false;
    }
    const count = compactRecvacksOf(chunk, start, stop, maxPayload, view);
    if (count > 0) {
      for (let k = 0; k < count; k++) onAck(k);
      return true;
    }
    const texts = asciiTextFramesOf(chunk, maxPayload, start, stop, view);
    if (texts === undefined) return false;
    for (let i = 0; i < texts.length && ws.readyState === ws.OPEN; i++) onText(texts[i]!);
    return true;
  };
  const write = receiver.write.bind(receiver);
  receiver.write = (chunk: Buffer): boolean => take(chunk, 0, chunk.length, undefined) || write(chunk);
  const socket = (ws as unknown as { _socket?: Socket })._socket;
  if (socket) takeReads(socket, (buf, start, n, shared) => take(buf, start, start + n, shared));
  return true;
}
