/**
 * The bench's JSON-RPC client against a WebSocket server (the `ws` package)
 * that writes its frames as raw bytes, so the chunks the client reads mix
 * what the in-place reader takes (whole `recv` frames at the front of a
 * chunk) with what it leaves to the client's frame parser (a send result, a
 * frame cut by the chunk, a fragmented message, another shape): every
 * delivery reaches the ledger sink once and in order, and each is
 * acknowledged once with the recvack text the reference path writes.
 */
import { encodeRecv, recvPayloadJson } from '@parley/protocol/jsonrpc';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { connectJsonRpc } from '../src/drivers/jsonrpc-conn.ts';
import type { Socket } from 'node:net';

const recvText = (n: number, topic = ''): string =>
  encodeRecv(
    {
      redDot: true,
      syncOnce: false,
      noPersist: false,
      setting: topic ? 0x08 : 0,
      expire: 0,
      messageId: `${9000 + n}`,
      messageSeq: n,
      clientMsgNo: `c-${n}`,
      timestamp: 1764030000,
      channelId: 'g',
      channelType: 2,
      topic,
      fromUid: 'pub',
    },
    recvPayloadJson(Buffer.from(JSON.stringify({ b: `s|${n}|1.5|` }))),
  );
const ackText = (n: number): string => `{"jsonrpc":"2.0","method":"recvack","params":{"messageId":"${9000 + n}","messageSeq":${n}}}`;

/** An unmasked server frame (`first`: FIN/opcode byte) of `text`. */
function frame(text: string, first = 0x81): Buffer {
  const data = Buffer.from(text, 'utf8');
  const head = data.length < 126 ? Buffer.from([first, data.length]) : Buffer.from([first, 126, data.length >> 8, data.length & 0xff]);
  return Buffer.concat([head, data]);
}

let wss: WebSocketServer | undefined;
afterEach(() => {
  wss?.close();
  for (const c of wss?.clients ?? []) c.terminate();
});

describe('JSON-RPC client receive path', () => {
  it('delivers and acknowledges every recv once, in order, whichever path reads it', async () => {
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((r) => wss!.once('listening', r));
    const port = (wss.address() as { port: number }).port;
    const acks: string[] = [];
    const server = new Promise<WebSocket>((resolve) => {
      wss!.on('connection', (ws) => {
        ws.on('message', (data) => {
          const text = data.toString();
          if (text.includes('"method":"connect"')) ws.send('{"jsonrpc":"2.0","id":0,"result":{"reasonCode":1}}');
          else acks.push(text);
        });
        resolve(ws);
      });
    });
    const got: Array<[string, string]> = [];
    const conn = await connectJsonRpc(`ws://127.0.0.1:${port}`, 'u1', 't', {
      text: (b) => got.push(['text', b]),
      bytes: (buf, s, e) => got.push(['bytes', Buffer.from(buf.subarray(s, e)).toString('utf8')]),
    });
    const raw = (await server) as WebSocket & { _socket: Socket };
    const write = async (b: Buffer): Promise<void> => {
      raw._socket.write(b);
      await sleep(30);
    };
    // 1, 2 whole at the front of a chunk, then a result for no request and 3 behind it (the parser's).
    await write(
      Buffer.concat([frame(recvText(1)), frame(recvText(2)), frame('{"jsonrpc":"2.0","id":77,"result":{}}'), frame(recvText(3))]),
    );
    // 4 cut across two chunks (the parser's), 5 after it in the second.
    const f4 = frame(recvText(4));
    await write(f4.subarray(0, 10));
    await write(Buffer.concat([f4.subarray(10), frame(recvText(5))]));
    // 6 whole again; 7 fragmented in two frames (the parser's); 8 with a topic (another shape: the reference path's); 9 whole.
    await write(frame(recvText(6)));
    const t7 = recvText(7);
    await write(Buffer.concat([frame(t7.slice(0, 20), 0x01), frame(t7.slice(20), 0x80)]));
    await write(frame(recvText(8, 'tp')));
    await write(frame(recvText(9)));
    for (let i = 0; i < 50 && acks.length < 9; i++) await sleep(20);
    conn.close();
    expect(got.map(([, b]) => b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `s|${n}|1.5|`));
    expect(acks).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9].map(ackText));
    // The in-place reader took at least the first two and the lone ones; the parser the ones behind or cut.
    const paths = new Map(got.map(([path, b]) => [b, path]));
    expect([1, 2, 6, 9].map((n) => paths.get(`s|${n}|1.5|`))).toEqual(['bytes', 'bytes', 'bytes', 'bytes']);
    expect([3, 4, 7, 8].map((n) => paths.get(`s|${n}|1.5|`))).toEqual(['text', 'text', 'text', 'text']);
  });
});
