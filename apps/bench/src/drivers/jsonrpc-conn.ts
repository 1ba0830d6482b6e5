/**
 * A lean JSON-RPC client connection for the generator, on the bench's own
 * WebSocket client (`ws-client.ts`): sends resolve on their result, `recv`
 * notifications go straight to a callback (no queue) and are acknowledged
 * with `recvack` like the SDKs do. The `recv`s at the front of each socket
 * read are read in place before the frame parser sees the read (see
 * `jsonrpc-recv-fast.ts`): their bodies go to the ledger as bytes and their
 * recvacks out in one write; everything else goes through the parser and the
 * reference path below (`JSON.parse`).
 */
import { takeRecvs } from './jsonrpc-recv-fast.ts';
import { connectLimit, JsonSends } from './json-sends.ts';
import { MAX_MESSAGE_BYTES, WsClient, type FrontReader } from './ws-client.ts';
import type { Connection, Deliveries, Destination } from './types.ts';

const RECV_PREFIX = '{"jsonrpc":"2.0","method":"recv"';

/** Opens `ws`, sends `connect` and resolves once the server answers reasonCode 1. */
export function connectJsonRpc(ws: string, uid: string, token: string, deliveries: Deliveries, timeoutMs = 10_000): Promise<Connection> {
  return new Promise((resolve, reject) => {
    let connected = false;
    const limit = connectLimit(
      timeoutMs,
      () => new Error(`JSON-RPC connect of ${uid} timed out`),
      () => socket,
      reject,
    );
    const onText = (text: string): void => {
      if (text.startsWith(RECV_PREFIX)) {
        const p = (JSON.parse(text) as { params: { messageId: string; messageSeq: number; payload: { b?: string } } }).params;
        socket.sendText(`{"jsonrpc":"2.0","method":"recvack","params":{"messageId":"${p.messageId}","messageSeq":${p.messageSeq}}}`);
        deliveries.text(typeof p.payload?.b === 'string' ? p.payload.b : JSON.stringify(p.payload));
        return;
      }
      const frame = JSON.parse(text) as { id?: number; result?: { reasonCode?: number }; error?: { message: string }; method?: string };
      if (frame.id === 0 && !connected) {
        if (frame.result?.reasonCode !== 1) return limit.fail(new Error(`JSON-RPC connect of ${uid} refused: ${text}`));
        connected = true;
        limit.opened();
        resolve(conn);
        return;
      }
      if (typeof frame.id === 'number') sends.settle(frame.id, frame.result?.reasonCode === 1, text);
    };
    const socket = new WsClient(ws, {
      open() {
        socket.front = recvReader(socket, deliveries);
        socket.sendText(
          JSON.stringify({
            jsonrpc: '2.0',
            method: 'connect',
            id: 0,
            params: { uid, token, deviceFlag: 1, deviceId: `${uid}-bench`, clientTimestamp: Date.now() },
          }),
        );
      },
      text: (buf, start, end) => onText(buf.toString('utf8', start, end)),
      closed(err) {
        sends.closed();
        if (!connected) limit.fail(err ?? new Error(`JSON-RPC connection of ${uid} closed before connect`));
      },
    });
    const sends = new JsonSends(socket, uid, true);
    const conn: Connection = {
      send: (to: Destination, body: string) => sends.send(to, body),
      close() {
        socket.close();
      },
    };
  });
}

/** The recvack frames of one read (reused: one JavaScript thread, written out before the next read, unless the socket holds them). */
const acks = { out: new Uint8Array(4096) };

/**
 * The in-place `recv` reader in front of the frame parser (which calls it only
 * between whole frames): reads the leading `recv` frames of `buf[0, n)`
 * (bodies to `deliveries` as bytes, their recvacks written in one write) and
 * returns how many bytes it took; the parser reads the rest, so frames are
 * still handled in the order they came.
 */
function recvReader(socket: WsClient, deliveries: Deliveries): FrontReader {
  const onBody = (buf: Uint8Array, start: number, end: number): void => deliveries.bytes(buf, start, end);
  return (buf, start, end) => {
    const taken = takeRecvs(buf, start, end, MAX_MESSAGE_BYTES, acks, onBody);
    // A buffer the socket holds (the kernel did not take it all) is given up: the next read's recvacks go to a new one.
    if (taken.ackBytes > 0 && !socket.writeFrames(acks.out.subarray(0, taken.ackBytes))) acks.out = new Uint8Array(acks.out.length);
    return taken.taken;
  };
}
