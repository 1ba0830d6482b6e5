/**
 * A lean JSON-RPC client connection for the generator: sends resolve on their
 * result, `recv` notifications go straight to a callback (no queue) and are
 * acknowledged with `recvack` like the SDKs do.
 */
import { WebSocket } from 'ws';
import type { Connection, Deliveries, Destination } from './types.ts';

const RECV_PREFIX = '{"jsonrpc":"2.0","method":"recv"';

interface Waiting {
  resolve: () => void;
  reject: (e: Error) => void;
}

/** Opens `ws`, sends `connect` and resolves once the server answers reasonCode 1. */
export function connectJsonRpc(ws: string, uid: string, token: string, deliveries: Deliveries, timeoutMs = 10_000): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(ws, { perMessageDeflate: false });
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
