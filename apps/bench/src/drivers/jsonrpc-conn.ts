/**
 * A lean JSON-RPC client connection for the generator: sends resolve on their
 * result, `recv` notifications go straight to a callback (no queue) and are
 * acknowledged with `recvack` like the SDKs do. The `recv`s at the front of
 * each socket chunk are read in place before ws sees the chunk (see
 * `jsonrpc-recv-fast.ts`): their bodies go to the ledger as bytes and their
 * recvacks out in one write; everything else goes through ws and the
 * reference path below.
 */
import { connect as netConnect, type NetConnectOpts, type Socket } from 'node:net';
import { WebSocket } from 'ws';
import { takeRecvs } from './jsonrpc-recv-fast.ts';
import type { Connection, Deliveries, Destination } from './types.ts';

const RECV_PREFIX = '{"jsonrpc":"2.0","method":"recv"';

interface Waiting {
  resolve: () => void;
  reject: (e: Error) => void;
}

/** Opens `ws`, sends `connect` and resolves once the server answers reasonCode 1. */
export function connectJsonRpc(ws: string, uid: string, token: string, deliveries: Deliveries, timeoutMs = 10_000): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const reads: SharedReads = { fast: undefined };
    const socket = new WebSocket(ws, {
      perMessageDeflate: false,
      createConnection: ((o: NetConnectOpts) => sharedReadSocket(o, reads)) as typeof netConnect,
    });
    const waiting = new Map<number, Waiting>();
    let nextId = 1;
    let connected = false;
    const timer = setTimeout(() => fail(new Error(`JSON-RPC connect of ${uid} timed out`)), timeoutMs);
    const fail = (e: Error): void => {
      clearTimeout(timer);
      socket.terminate();
      reject(e);
    };
    const conn: Connection = {
      send(to: Destination, body: string) {
        const id = nextId++;
        const done = new Promise<void>((res, rej) => waiting.set(id, { resolve: res, reject: rej }));
        socket.send(
          JSON.stringify({
            jsonrpc: '2.0',
            method: 'send',
            id,
            params: { clientMsgNo: `${uid}-${id}`, channelId: to.id, channelType: to.kind === 'user' ? 1 : 2, payload: { b: body } },
          }),
        );
        return done;
      },
      close() {
        socket.close();
      },
    };
    socket.on('open', () => {
      reads.fast = recvReaderBeforeWs(socket, deliveries);
      socket.send(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'connect',
          id: 0,
          params: { uid, token, deviceFlag: 1, deviceId: `${uid}-bench`, clientTimestamp: Date.now() },
        }),
      );
    });
    socket.on('error', (e) => fail(e));
    socket.on('close', () => {
      for (const w of waiting.values()) w.reject(new Error('connection closed'));
      waiting.clear();
      if (!connected) fail(new Error(`JSON-RPC connection of ${uid} closed before connect`));
    });
    socket.on('message', (data) => {
      const text = data.toString();
      if (text.startsWith(RECV_PREFIX)) {
        const p = (JSON.parse(text) as { params: { messageId: string; messageSeq: number; payload: { b?: string } } }).params;
        socket.send(`{"jsonrpc":"2.0","method":"recvack","params":{"messageId":"${p.messageId}","messageSeq":${p.messageSeq}}}`);
        deliveries.text(typeof p.payload?.b === 'string' ? p.payload.b : JSON.stringify(p.payload));
        return;
      }
      const frame = JSON.parse(text) as { id?: number; result?: { reasonCode?: number }; error?: { message: string }; method?: string };
      if (frame.id === 0 && !connected) {
        if (frame.result?.reasonCode !== 1) return fail(new Error(`JSON-RPC connect of ${uid} refused: ${text}`));
        connected = true;
        clearTimeout(timer);
        resolve(conn);
        return;
      }
      if (typeof frame.id !== 'number') return;
      const w = waiting.get(frame.id);
      if (!w) return;
      waiting.delete(frame.id);
      if (frame.result?.reasonCode === 1) w.resolve();
      else w.reject(new Error(`send refused: ${text.slice(0, 200)}`));
    });
  });
}

/**
 * The read buffer shared by every connection: each read lands in it and is
 * handed on synchronously (JavaScript runs one read callback at a time).
 */
let sharedReadBuffer: Buffer | undefined;
const SHARED_READ_BYTES = 64 * 1024;

/** A connection's in-place reader once ws is open (see {@link recvReaderBeforeWs}). */
interface SharedReads {
  fast: ((buf: Uint8Array, n: number) => number) | undefined;
}

/**
 * ws's TCP connection, reading into the shared buffer (Node's `onread`)
 * instead of a fresh buffer per read and the stream machinery. Each read is
 * offered to the in-place reader first (once there is one); what it leaves,
 * the whole read before, goes on as a copy in the socket's `data` event,
 * which ws (and before it, the HTTP upgrade) listens to.
 */
function sharedReadSocket(o: NetConnectOpts, reads: SharedReads): Socket {
  const { host, port } = o as { host?: string; port?: number };
  const socket: Socket = netConnect({
    host,
    port: Number(port),
    onread: {
      buffer: () => (sharedReadBuffer ??= Buffer.allocUnsafe(SHARED_READ_BYTES)),
      callback: (n: number, buf: Uint8Array) => {
        const taken = reads.fast ? reads.fast(buf, n) : 0;
        if (taken < n) socket.emit('data', Buffer.from(buf.subarray(taken, n)));
        return true;
      },
    },
  });
  return socket;
}

/** What this module reads of ws 8's receiver and sender (both between frames when it reads or writes itself). */
interface WsInternals {
  _receiver?: {
    writableLength: number;
    _state: number;
    _bufferedBytes: number;
    _fragmented: number;
    _errored: boolean;
    _maxPayload: number;
  };
  _sender?: { _state: number; _queue: unknown[] };
  _socket?: { write(data: Uint8Array): boolean };
}

/** ws's receiver state between two frames (`GET_INFO`), and its sender's idle state (`DEFAULT`). */
const GET_INFO = 0;
const SENDER_IDLE = 0;

/** The recvack frames of one chunk (reused: one JavaScript thread, written out before the next chunk). */
const acks = { out: new Uint8Array(4096) };

/**
 * The in-place `recv` reader in front of ws's frame parser: while ws's
 * receiver is between two messages and its sender has nothing queued, it
 * reads the leading `recv` frames of `buf[0, n)` (bodies to `deliveries` as
 * bytes, their recvacks written to the socket in one write) and returns how
 * many bytes it took; the rest goes to ws, so frames are still handled in the
 * order they came. Undefined when ws's internals are not as expected: the
 * connection then keeps ws's path.
 */
function recvReaderBeforeWs(ws: WebSocket, deliveries: Deliveries): ((buf: Uint8Array, n: number) => number) | undefined {
  const { _receiver: receiver, _sender: sender, _socket: socket } = ws as unknown as WsInternals;
  if (
    !receiver ||
    !sender ||
    !socket ||
    typeof receiver._state !== 'number' ||
    typeof receiver._bufferedBytes !== 'number' ||
    typeof receiver._fragmented !== 'number' ||
    typeof receiver._maxPayload !== 'number' ||
    typeof sender._state !== 'number' ||
    !Array.isArray(sender._queue)
  ) {
    return undefined;
  }
  const onBody = (buf: Uint8Array, start: number, end: number): void => deliveries.bytes(buf, start, end);
  return (buf, n) => {
    if (
      receiver._state !== GET_INFO ||
      receiver._bufferedBytes !== 0 ||
      receiver._fragmented !== 0 ||
      receiver._errored ||
      receiver.writableLength !== 0 ||
      sender._state !== SENDER_IDLE ||
      sender._queue.length !== 0 ||
      ws.readyState !== ws.OPEN
    ) {
      return 0;
    }
    const taken = takeRecvs(buf, n, receiver._maxPayload, acks, onBody);
    if (taken.ackBytes > 0) {
      const frames = Buffer.allocUnsafe(taken.ackBytes);
      frames.set(acks.out.subarray(0, taken.ackBytes));
      socket.write(frames);
    }
    return taken.taken;
  };
}
