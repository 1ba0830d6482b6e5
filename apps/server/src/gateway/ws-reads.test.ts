import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Buffer } from 'node:buffer';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { takeJsonRpcReadsBeforeWs } from './ws-reads.ts';
import { ackIdText } from './ws-recvack.ts';
import { clientFrame, recvack, send } from '../../test/ws-client-frames.ts';

describe('takeJsonRpcReadsBeforeWs', () => {
  let wss: WebSocketServer;
  let url: string;
  beforeAll(async () => {
    wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
    await new Promise((r) => wss.once('listening', r));
    url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    for (const ws of wss.clients) ws.terminate();
    return new Promise<void>((r) => wss.close(() => r()));
  });

  /**
   * A connection whose server side takes its reads early. One ordered log records the acks and
   * texts taken (`ack:`, `text:`) and the messages ws emitted (`ws:`); `reachedWs` counts the
   * chunks that still reached ws's receiver (through the socket's Readable and ws's data listener).
   */
  async function connect() {
    const log: string[] = [];
    const waiters: Array<() => void> = [];
    const accepted = new Promise<WebSocket>((r) => wss.once('connection', r));
    const client = new WebSocket(url, { perMessageDeflate: false });
    await new Promise((r) => client.once('open', r));
    const server = await accepted;
    const note = (s: string) => {
      log.push(s);
      for (const w of waiters.splice(0)) w();
    };
    const taken = takeJsonRpcReadsBeforeWs(
      server,
      (slot) => note(`ack:${ackIdText(slot)}`),
      (text) => note(`text:${text}`),
    );
    expect(taken).toBe(true);
    server.on('message', (data) => note(`ws:${String(data)}`));
    const receiver = (server as unknown as { _receiver: { write(chunk: Buffer): boolean } })._receiver;
    const write = receiver.write.bind(receiver);
    const counts = { reachedWs: 0 };
    receiver.write = (chunk) => (counts.reachedWs++, write(chunk));
    return {
      server,
      log,
      counts,
      /** The patched receiver's own write, as ws's data listener calls it (the ordinary path). */
      receiverWrite: write,
      raw: (client as unknown as { _socket: Socket })._socket,
      async until(entry: string) {
        while (!log.includes(entry)) await new Promise<void>((r) => waiters.push(r));
      },
      close: () => client.terminate(),
    };
  }

  it("takes reads of only recvacks or only ASCII texts before Node's stream and ws, in arrival order; others reach ws", async () => {
    const c = await connect();
    // Each write waits for the previous one to be read, so each is one read on the server.
    c.raw.write(Buffer.concat([clientFrame(recvack('1')), clientFrame(recvack('2'))]));
    await c.until('ack:2');
    c.raw.write(Buffer.concat([clientFrame(send(1)), clientFrame(recvack('3')), clientFrame(send(300))]));
    await c.until(`text:${send(300)}`);
    c.raw.write(clientFrame(recvack('4')));
    await c.until('ack:4');
    expect(c.counts.reachedWs).toBe(0);
    // Not ASCII: the whole read goes to ws, the ASCII frame before it too.
    c.raw.write(Buffer.concat([clientFrame(send(3)), clientFrame('{"b":"ü"}')]));
    await c.until('ws:{"b":"ü"}');
    expect(c.counts.reachedWs).toBe(1);
    // A fragmented message and a ping: ws's.
    c.raw.write(Buffer.concat([clientFrame(recvack('5')), clientFrame('{"after":5}', 1, false), clientFrame('x', 9), clientFrame('}', 0)]));
    await c.until('ws:{"after":5}}');
    c.raw.write(clientFrame('{"end":1}'));
    await c.until('text:{"end":1}');
    expect(c.counts.reachedWs).toBe(2);
    expect(c.log).toEqual([
      'ack:1',
      'ack:2',
      `text:${send(1)}`,
      `text:${recvack('3')}`,
      `text:${send(300)}`,
      'ack:4',
      `ws:${send(3)}`,
      'ws:{"b":"ü"}',
      `ws:${recvack('5')}`,
      'ws:{"after":5}}',
      'text:{"end":1}',
    ]);
    c.close();
  });

  it('takes a chunk handed to ws the ordinary way (no read taken at the handle) by the same rules', async () => {
    const c = await connect();
    expect(c.receiverWrite(Buffer.concat([clientFrame(recvack('7')), clientFrame(recvack('8'))]))).toBe(true);
    c.receiverWrite(clientFrame(send(7)));
    expect(c.log).toEqual(['ack:7', 'ack:8', `text:${send(7)}`]);
    c.receiverWrite(clientFrame('{"b":"é"}'));
    await c.until('ws:{"b":"é"}');
    c.close();
  });

  it('leaves frames to ws while ws holds part of a message', async () => {
    const c = await connect();
    const first = clientFrame(send(5));
    c.raw.write(first.subarray(0, 5));
    // Let the server read the partial frame first.
    await new Promise((r) => setTimeout(r, 50));
    expect(c.log).toEqual([]);
    c.raw.write(Buffer.concat([first.subarray(5), clientFrame(recvack('9'))]));
    await c.until(`ws:${recvack('9')}`);
    c.raw.write(clientFrame(recvack('10')));
    await c.until('ack:10');
    c.raw.write(clientFrame(send(7)));
    await c.until(`text:${send(7)}`);
    expect(c.log).toEqual([`ws:${send(5)}`, `ws:${recvack('9')}`, 'ack:10', `text:${send(7)}`]);
    c.close();
  });

  it('drops the rest of a read once a text handler closed the connection', async () => {
    const accepted = new Promise<WebSocket>((r) => wss.once('connection', r));
    const client = new WebSocket(url, { perMessageDeflate: false });
    await new Promise((r) => client.once('open', r));
    const server = await accepted;
    const seen: string[] = [];
    const messages: string[] = [];
    const closed = new Promise((r) => server.once('close', r));
    takeJsonRpcReadsBeforeWs(
      server,
      () => seen.push('ack'),
      (text) => {
        seen.push(text);
        server.close(1008, 'bye');
      },
    );
    server.on('message', (data) => messages.push(String(data)));
    (client as unknown as { _socket: Socket })._socket.write(Buffer.concat([clientFrame('{"a":1}'), clientFrame('{"a":2}')]));
    await closed;
    expect(seen).toEqual(['{"a":1}']);
    expect(messages).toEqual([]);
    client.terminate();
  });

  it('refuses a socket whose ws receiver is not the one it knows, and leaves it as it was', () => {
    const write = () => true;
    const fake = { _receiver: { write, _state: 0 } } as unknown as WebSocket;
    expect(
      takeJsonRpcReadsBeforeWs(
        fake,
        () => undefined,
        () => undefined,
      ),
    ).toBe(false);
    expect((fake as unknown as { _receiver: { write: unknown } })._receiver.write).toBe(write);
    expect(
      takeJsonRpcReadsBeforeWs(
        {} as WebSocket,
        () => undefined,
        () => undefined,
      ),
    ).toBe(false);
  });
});
