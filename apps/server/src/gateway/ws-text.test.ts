import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo, Socket } from 'node:net';
import type { EventEmitter } from 'node:events';
import * as wsModule from 'ws';
import { WebSocket, WebSocketServer } from 'ws';
import { asciiTextFramesOf, MAX_TEXT_BYTES, takeTextBeforeWs } from './ws-text.ts';

const send = (n: number): string =>
  `{"jsonrpc":"2.0","method":"send","id":${n},"params":{"clientMsgNo":"c-${n}","channelId":"u2","channelType":1,"payload":{"b":"${'x'.repeat(n % 200)}"}}}`;

/** A client frame as RFC 6455 wants it: masked, FIN, opcode (text 1, ping 9), 7- 16- or 64-bit length. */
function clientFrame(data: string | Buffer, opcode = 1, fin = true, mask = [0x12, 0x34, 0x56, 0x78]): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const head = body.length < 126 ? 2 : body.length < 65536 ? 4 : 10;
  const f = Buffer.alloc(head + 4 + body.length);
  f[0] = (fin ? 0x80 : 0) | opcode;
  if (head === 2) f[1] = 0x80 | body.length;
  else if (head === 4) {
    f[1] = 0x80 | 126;
    f.writeUInt16BE(body.length, 2);
  } else {
    f[1] = 0x80 | 127;
    f.writeBigUInt64BE(BigInt(body.length), 2);
  }
  for (let i = 0; i < 4; i++) f[head + i] = mask[i]!;
  for (let i = 0; i < body.length; i++) f[head + 4 + i] = body[i]! ^ mask[i & 3]!;
  return f;
}

/** ws's frame parser (exported by ws, not declared by its types). */
const { Receiver } = wsModule as unknown as {
  Receiver: new (o: { isServer: boolean; maxPayload: number }) => EventEmitter & { write(chunk: Buffer): boolean };
};

/** What ws's own receiver (server side) emits for `chunk`. */
function wsMessages(chunk: Buffer, maxPayload = 0): string[] {
  const out: string[] = [];
  const r = new Receiver({ isServer: true, maxPayload });
  r.on('message', (data: Buffer, isBinary: boolean) => out.push(`${isBinary ? 'bin' : 'text'}:${data.toString('utf8')}`));
  r.on('error', () => undefined);
  r.write(chunk);
  // ws fails a frame over the limit at once (its 'error' event follows on the next tick).
  if ((r as unknown as { _errored: boolean })._errored) out.push('error');
  return out;
}

describe('asciiTextFramesOf', () => {
  it('reads the texts ws reads from chunks of whole ASCII text frames (7- and 16-bit lengths, any mask)', () => {
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const frames: Buffer[] = [];
      const count = 1 + rand(5);
      for (let f = 0; f < count; f++) {
        const len = 1 + rand(f === 0 ? 700 : 130);
        let text = '';
        for (let i = 0; i < len; i++) text += String.fromCharCode(0x20 + rand(0x5f));
        frames.push(clientFrame(text, 1, true, [rand(256), rand(256), rand(256), rand(256)]));
      }
      const chunk = Buffer.concat(frames);
      const texts = asciiTextFramesOf(chunk, 0);
      expect(texts?.map((t) => `text:${t}`)).toEqual(wsMessages(chunk));
      // The same frames at an odd offset of a larger buffer, read through its DataView (from
      // `frames`: ws's receiver above unmasked `chunk` in place).
      const at = 1 + 2 * rand(8);
      const big = Buffer.concat([Buffer.alloc(at, 0xff), ...frames, Buffer.alloc(3, 0xee)]);
      const view = new DataView(big.buffer, big.byteOffset, big.length);
      expect(asciiTextFramesOf(big, 0, at, at + chunk.length, view)).toEqual(texts);
    }
  });

  it('reads only its range of a larger buffer, whatever lies around it', () => {
    const frames = Buffer.concat([clientFrame(send(1)), clientFrame(send(140), 1, true, [1, 2, 3, 4])]);
    const around = Buffer.concat([clientFrame('\u00e9'), Buffer.from([0x81, 0xff]), frames, Buffer.from([0x82, 0x80, 0xff])]);
    const start = around.length - frames.length - 3;
    expect(asciiTextFramesOf(around, 0, start, start + frames.length)).toEqual([send(1), send(140)]);
    const view = new DataView(around.buffer, around.byteOffset, around.length);
    expect(asciiTextFramesOf(around, 0, start, start + frames.length, view)).toEqual([send(1), send(140)]);
    // Not ASCII in any byte of a word or of the tail, read either way.
    for (const text of ['{"b":"\u00e9"}', 'é234567', '1234567é', '\u0080']) {
      const f = clientFrame(text, 1, true, [9, 8, 7, 6]);
      expect(asciiTextFramesOf(f, 0)).toBeUndefined();
      expect(asciiTextFramesOf(f, 0, 0, f.length, new DataView(f.buffer, f.byteOffset, f.length))).toBeUndefined();
    }
    // A range that cuts the last frame takes nothing, though the bytes after it would complete it.
    expect(asciiTextFramesOf(around, 0, start, start + frames.length - 1)).toBeUndefined();
    expect(asciiTextFramesOf(around, 0)).toBeUndefined();
  });

  it('takes nothing from a chunk with anything else in it', () => {
    const ok = clientFrame(send(1));
    for (const chunk of [
      Buffer.concat([ok, clientFrame('{"b":"é"}')]), // non-ASCII: ws validates and decodes UTF-8
      Buffer.concat([clientFrame('x', 9), ok]), // a ping frame
      Buffer.concat([ok, ok.subarray(0, 10)]), // a frame cut short
      Buffer.concat([ok, ok.subarray(0, 3)]), // a header cut short
      clientFrame(send(2), 1, false), // a fragment
      clientFrame(send(2), 2), // binary
      clientFrame(''), // empty
      clientFrame('y'.repeat(MAX_TEXT_BYTES + 1)), // longer than this path reads
      clientFrame('z'.repeat(70_000)), // a 64-bit length
      Buffer.from(clientFrame(send(300))).fill(0, 2, 4), // a 16-bit length of 0
      Buffer.from(clientFrame('a')).fill(0x01, 1, 2), // unmasked
      Buffer.from(ok).fill(0xc1, 0, 1), // RSV1 set
      Buffer.alloc(0),
    ]) {
      expect(asciiTextFramesOf(chunk, 0)).toBeUndefined();
    }
    expect(asciiTextFramesOf(ok, 50)).toBeUndefined(); // over the frame limit: ws must refuse it
    expect(wsMessages(ok, 50)).toEqual(['error']);
  });
});

describe('takeTextBeforeWs', () => {
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

  /** A connection whose server side records texts taken early and ws messages, in one ordered log. */
  async function connect(): Promise<{ raw: Socket; log: string[]; until(entry: string): Promise<void>; close(): void }> {
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
    expect(takeTextBeforeWs(server, (text) => note(`fast:${text}`))).toBe(true);
    server.on('message', (data) => note(`ws:${String(data)}`));
    const raw = (client as unknown as { _socket: Socket })._socket;
    return {
      raw,
      log,
      async until(entry) {
        while (!log.includes(entry)) await new Promise<void>((r) => waiters.push(r));
      },
      close: () => client.terminate(),
    };
  }

  it('hands chunks of ASCII text frames to the session and every other chunk to ws, in arrival order', async () => {
    const c = await connect();
    // Each write waits for the previous one to be read, so each is one chunk on the server.
    c.raw.write(Buffer.concat([clientFrame(send(1)), clientFrame(send(300))]));
    await c.until(`fast:${send(300)}`);
    c.raw.write(clientFrame('{"b":"ü"}'));
    await c.until('ws:{"b":"ü"}');
    c.raw.write(clientFrame(send(3)));
    await c.until(`fast:${send(3)}`);
    c.raw.write(Buffer.concat([clientFrame(send(4)), clientFrame('{"after":4}', 1, false), clientFrame('}', 0)]));
    await c.until('ws:{"after":4}}');
    c.raw.write(clientFrame('{"end":1}'));
    await c.until('fast:{"end":1}');
    expect(c.log).toEqual([
      `fast:${send(1)}`,
      `fast:${send(300)}`,
      'ws:{"b":"ü"}',
      `fast:${send(3)}`,
      `ws:${send(4)}`,
      'ws:{"after":4}}',
      'fast:{"end":1}',
    ]);
    c.close();
  });

  it('leaves frames to ws while ws holds part of a message', async () => {
    const c = await connect();
    const first = clientFrame(send(5));
    c.raw.write(first.subarray(0, 5));
    // Let the server read the partial frame first.
    await new Promise((r) => setTimeout(r, 50));
    expect(c.log).toEqual([]);
    c.raw.write(Buffer.concat([first.subarray(5), clientFrame(send(6))]));
    await c.until(`ws:${send(6)}`);
    c.raw.write(clientFrame(send(7)));
    await c.until(`fast:${send(7)}`);
    expect(c.log).toEqual([`ws:${send(5)}`, `ws:${send(6)}`, `fast:${send(7)}`]);
    c.close();
  });

  it('drops the rest of a chunk once the handler closed the connection', async () => {
    const c = await connect();
    const server = [...wss.clients].at(-1)!;
    let seen = 0;
    const closed = new Promise((r) => server.once('close', r));
    // A second reader over the first one: it sees the chunk first, and closes the connection at its first text.
    takeTextBeforeWs(server, () => {
      seen++;
      server.close(1008, 'bye');
    });
    c.raw.write(Buffer.concat([clientFrame(send(8)), clientFrame(send(9))]));
    await closed;
    expect(seen).toBe(1);
    expect(c.log).toEqual([]);
    c.close();
  });
});
