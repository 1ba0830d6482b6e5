import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { compactRecvackMessageId } from '@parley/protocol/jsonrpc';
import { ackIdKey, ackIdMatches, ackIdText, compactRecvacksOf, takeRecvacksBeforeWs } from './ws-recvack.ts';

const recvack = (id: string): string => JSON.stringify({ jsonrpc: '2.0', method: 'recvack', params: { messageId: id, messageSeq: 1 } });

/** A client frame as RFC 6455 wants it: masked, FIN, opcode (text 1, ping 9). */
function clientFrame(text: string, opcode = 1, fin = true, mask = [0x12, 0x34, 0x56, 0x78]): Buffer {
  const data = Buffer.from(text, 'utf8');
  if (data.length > 125) throw new Error('test frames are short');
  const f = Buffer.alloc(6 + data.length);
  f[0] = (fin ? 0x80 : 0) | opcode;
  f[1] = 0x80 | data.length;
  for (let i = 0; i < 4; i++) f[2 + i] = mask[i]!;
  for (let i = 0; i < data.length; i++) f[6 + i] = data[i]! ^ mask[i & 3]!;
  return f;
}

/** The ids `compactRecvacksOf` reads from the whole of `chunk`, as strings; undefined when it takes nothing. */
function idsOf(chunk: Buffer, maxPayload: number): string[] | undefined {
  const count = compactRecvacksOf(chunk, 0, chunk.length, maxPayload);
  if (count === 0) return undefined;
  return Array.from({ length: count }, (_, k) => ackIdText(k));
}

describe('compactRecvacksOf', () => {
  it('reads every recvack of a chunk made only of whole compact recvacks, in order', () => {
    const chunk = Buffer.concat([
      clientFrame(recvack('1')),
      clientFrame(recvack('22'), 1, true, [0, 0, 0, 0]),
      clientFrame(recvack('333')),
    ]);
    expect(idsOf(chunk, 0)).toEqual(['1', '22', '333']);
  });

  it('takes nothing from a chunk with anything else in it', () => {
    const ack = clientFrame(recvack('1'));
    for (const chunk of [
      Buffer.concat([ack, clientFrame('{"jsonrpc":"2.0","method":"ping","id":1}')]),
      Buffer.concat([clientFrame('x', 9), ack]), // a ping frame
      Buffer.concat([ack, ack.subarray(0, 10)]), // a frame cut short
      clientFrame(recvack('1'), 1, false), // a fragment
      clientFrame(recvack('1'), 2), // binary
      Buffer.from(ack).fill(0x00, 1, 2), // unmasked
      Buffer.alloc(0),
    ]) {
      expect(idsOf(chunk, 0)).toBeUndefined();
    }
    expect(idsOf(ack, 50)).toBeUndefined(); // over the frame limit: ws must refuse it
  });
});

describe('compactRecvacksOf against compactRecvackMessageId', () => {
  const head = '{"jsonrpc":"2.0","method":"recvack","params":{"messageId":"';
  const texts = [
    recvack('1'),
    recvack('0'),
    recvack('18446744073709551615'),
    recvack('99999999999999999999'),
    recvack('123456789012345678901'), // 21 digits
    recvack(''),
    recvack('12a'),
    recvack('-1'),
    recvack(' 1'),
    `${head}7","messageSeq":0}}`,
    `${head}7","messageSeq":00}}`,
    `${head}7","messageSeq":01}}`,
    `${head}7","messageSeq":999999999999999}}`,
    `${head}7","messageSeq":1000000000000000}}`, // 16 digits
    `${head}7","messageSeq":-1}}`,
    `${head}7","messageSeq":1}}}`,
    `${head}7","messageSeq":1}`,
    `${head}7","messageSeq":1} }`,
    `${head}7","messageSeq":}}`,
    `${head}7", "messageSeq":1}}`,
    `${head}7","messageseq":1}}`,
    `${head.replace('recvack', 'recvacc')}7","messageSeq":1}}`,
    `${head.replace('2.0', '2.1')}7","messageSeq":1}}`,
    `${head.slice(0, -1)}7","messageSeq":1}}`,
    `${head}${'1'.repeat(20)}","messageSeq":${'9'.repeat(15)}}}`, // the longest
    `${head}7","messageSeq":1}}x`,
  ];
  it('takes exactly the frames the regular expression takes, with the same id, for every mask and length', () => {
    for (const text of texts) {
      for (const mask of [
        [0, 0, 0, 0],
        [0x12, 0x34, 0x56, 0x78],
        [0xff, 0x80, 0x01, 0x7f],
      ]) {
        const id = compactRecvackMessageId(text);
        const got = idsOf(clientFrame(text, 1, true, mask), 0);
        expect(got, text).toEqual(id === undefined ? undefined : [id]);
        // Two frames in one chunk, and a frame cut anywhere, as ws would see them.
        const twice = Buffer.concat([clientFrame(recvack('5'), 1, true, mask), clientFrame(text, 1, true, mask)]);
        expect(idsOf(twice, 0), text).toEqual(id === undefined ? undefined : ['5', id]);
      }
    }
  });

  it('agrees with the regular expression on every one-byte change of a recvack, masked or not', () => {
    const base = `${head}1234567890123456789","messageSeq":120}}`;
    const chars = ['0', '1', '9', '"', ',', ':', '{', '}', 'a', 'M', ' ', '\\', '/', '.', '-', '\u007f'];
    for (const mask of [
      [0, 0, 0, 0],
      [0x9a, 0x02, 0xff, 0x41],
    ]) {
      for (let i = 0; i < base.length; i++) {
        for (const c of chars) {
          const text = base.slice(0, i) + c + base.slice(i + 1);
          const id = compactRecvackMessageId(text);
          expect(idsOf(clientFrame(text, 1, true, mask), 0), text).toEqual(id === undefined ? undefined : [id]);
        }
        // One byte fewer.
        const shorter = base.slice(0, i) + base.slice(i + 1);
        const id = compactRecvackMessageId(shorter);
        expect(idsOf(clientFrame(shorter, 1, true, mask), 0), shorter).toEqual(id === undefined ? undefined : [id]);
      }
    }
  });

  it('reads only its range of a shared buffer, through the DataView it is given, whatever lies around it', () => {
    const frames = Buffer.concat([clientFrame(recvack('7')), clientFrame(recvack('12345678901234567890'), 1, true, [1, 2, 3, 4])]);
    for (const fill of [0x00, 0x30, 0xff]) {
      for (const start of [0, 1, 4, 1000]) {
        const shared = Buffer.alloc(4096, fill);
        const view = new DataView(shared.buffer, shared.byteOffset, shared.length);
        frames.copy(shared, start);
        const count = compactRecvacksOf(shared, start, start + frames.length, 0, view);
        expect(Array.from({ length: count }, (_, k) => ackIdText(k))).toEqual(['7', '12345678901234567890']);
        // The range cuts the second frame short, or starts inside the first: nothing is taken.
        expect(compactRecvacksOf(shared, start, start + frames.length - 1, 0, view)).toBe(0);
        expect(compactRecvacksOf(shared, start + 1, start + frames.length, 0, view)).toBe(0);
      }
      // The same frames ending at the buffer's very end (words are then read from a copy).
      const end = Buffer.alloc(frames.length + 1, fill);
      frames.copy(end, 1);
      const endView = new DataView(end.buffer, end.byteOffset, end.length);
      expect(compactRecvacksOf(end.subarray(1), 0, frames.length, 0)).toBe(2);
      expect(compactRecvacksOf(end, 1, end.length, 0, endView)).toBe(2);
      expect(compactRecvacksOf(end, 0, end.length, 0, endView)).toBe(0);
    }
  });

  it('matches an ack with an id exactly as the id text compares, at every length', () => {
    const ids = [
      '1',
      '12',
      '123',
      '1234',
      '12345',
      '123456',
      '1234567',
      '1234567890123456789',
      '18446744073709551615',
      '99999999999999999999',
    ];
    const others = [...ids, '0', '01', '2', '1234567890123456788', '2234567890123456789', '123456789012345678901', '', '12a'];
    for (const seq of ['0', '7', '123456789012345']) {
      const chunk = Buffer.concat(
        ids.map((id, i) => clientFrame(`${head}${id}","messageSeq":${seq}}}`, 1, true, [i, 0x5a, 0xa5, 0xff - i])),
      );
      expect(compactRecvacksOf(chunk, 0, chunk.length, 0)).toBe(ids.length);
      ids.forEach((id, slot) => {
        expect(ackIdText(slot)).toBe(id);
        for (const other of others) expect(ackIdMatches(slot, ackIdKey(other)), `${id} vs ${other}`).toBe(other === id);
      });
    }
  });

  it('takes no frame cut short, whatever the cut', () => {
    const frame = clientFrame(recvack('1234567890'));
    for (let cut = 1; cut < frame.length; cut++) expect(idsOf(frame.subarray(0, cut), 0)).toBeUndefined();
  });

  it('reads a frame at any offset of a shared read buffer', () => {
    const frame = clientFrame(recvack('42'));
    for (let offset = 0; offset < 8; offset++) {
      const pool = Buffer.alloc(offset + frame.length + 3, 0xaa);
      frame.copy(pool, offset);
      expect(idsOf(pool.subarray(offset, offset + frame.length), 0)).toEqual(['42']);
    }
  });
});

describe('takeRecvacksBeforeWs', () => {
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

  /** A connection whose server side records recvacks taken early and ws messages, in one ordered log. */
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
    expect(takeRecvacksBeforeWs(server, (slot) => note(`ack:${ackIdText(slot)}`))).toBe(true);
    server.on('message', (data) => note(`msg:${String(data)}`));
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

  it('hands a chunk of recvacks to the session and every other frame to ws, in arrival order', async () => {
    const c = await connect();
    // Each write waits for the previous one to be read, so each is one chunk on the server.
    c.raw.write(Buffer.concat([clientFrame(recvack('1')), clientFrame(recvack('2'))]));
    await c.until('ack:2');
    c.raw.write(clientFrame('{"jsonrpc":"2.0","method":"ping","id":1}'));
    await c.until('msg:{"jsonrpc":"2.0","method":"ping","id":1}');
    c.raw.write(clientFrame(recvack('3')));
    await c.until('ack:3');
    c.raw.write(Buffer.concat([clientFrame(recvack('4')), clientFrame('{"after":4}')]));
    await c.until('msg:{"after":4}');
    c.raw.write(clientFrame('{"end":1}'));
    await c.until('msg:{"end":1}');
    expect(c.log).toEqual([
      'ack:1',
      'ack:2',
      'msg:{"jsonrpc":"2.0","method":"ping","id":1}',
      'ack:3',
      `msg:${recvack('4')}`,
      'msg:{"after":4}',
      'msg:{"end":1}',
    ]);
    c.close();
  });

  /**
   * A connection taking recvacks (and, with `texts`, text frames) before the stream, whose log
   * records what the session got and what ws emitted, and which counts the chunks that still
   * reached ws's receiver (through the socket's Readable and ws's data listener).
   */
  async function counted(texts: boolean) {
    const log: string[] = [];
    const accepted = new Promise<WebSocket>((r) => wss.once('connection', r));
    const client = new WebSocket(url, { perMessageDeflate: false });
    await new Promise((r) => client.once('open', r));
    const server = await accepted;
    let waiter: (() => void) | undefined;
    const note = (s: string) => {
      log.push(s);
      waiter?.();
    };
    const onText = texts ? (text: string) => note(`text:${text}`) : undefined;
    expect(takeRecvacksBeforeWs(server, (slot) => note(`ack:${ackIdText(slot)}`), onText)).toBe(true);
    server.on('message', (data) => note(`msg:${String(data)}`));
    const receiver = (server as unknown as { _receiver: { write(chunk: Buffer): boolean } })._receiver;
    const write = receiver.write.bind(receiver);
    const counts = { reachedWs: 0 };
    receiver.write = (chunk) => (counts.reachedWs++, write(chunk));
    return {
      log,
      counts,
      raw: (client as unknown as { _socket: Socket })._socket,
      async until(entry: string) {
        while (!log.includes(entry)) await new Promise<void>((r) => (waiter = r));
      },
      close: () => client.terminate(),
    };
  }

  it("takes a read of only recvacks before Node's stream and ws see it; other reads still reach ws", async () => {
    const c = await counted(false);
    c.raw.write(Buffer.concat([clientFrame(recvack('21')), clientFrame(recvack('22'))]));
    await c.until('ack:22');
    expect(c.counts.reachedWs).toBe(0);
    c.raw.write(clientFrame('{"ping":1}'));
    await c.until('msg:{"ping":1}');
    expect(c.counts.reachedWs).toBe(1);
    c.raw.write(clientFrame(recvack('23')));
    await c.until('ack:23');
    expect(c.counts.reachedWs).toBe(1);
    expect(c.log).toEqual(['ack:21', 'ack:22', 'msg:{"ping":1}', 'ack:23']);
    c.close();
  });

  it("with onText, takes a read of only ASCII text frames before Node's stream too, in order; others reach ws", async () => {
    const c = await counted(true);
    c.raw.write(Buffer.concat([clientFrame('{"send":1}'), clientFrame(recvack('31')), clientFrame('{"send":2}')]));
    await c.until('text:{"send":2}');
    c.raw.write(clientFrame(recvack('32')));
    await c.until('ack:32');
    expect(c.counts.reachedWs).toBe(0);
    c.raw.write(Buffer.concat([clientFrame('{"send":3}'), clientFrame('{"b":"ü"}')]));
    await c.until('msg:{"b":"ü"}');
    expect(c.counts.reachedWs).toBe(1);
    c.raw.write(clientFrame('{"send":4}'));
    await c.until('text:{"send":4}');
    expect(c.counts.reachedWs).toBe(1);
    expect(c.log).toEqual([
      'text:{"send":1}',
      `text:${recvack('31')}`,
      'text:{"send":2}',
      'ack:32',
      'msg:{"send":3}',
      'msg:{"b":"ü"}',
      'text:{"send":4}',
    ]);
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
    takeRecvacksBeforeWs(
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

  it('leaves recvacks to ws while ws holds part of a message', async () => {
    const c = await connect();
    const first = clientFrame('{"split":true}');
    c.raw.write(first.subarray(0, 5));
    // Let the server read the partial frame first.
    await new Promise((r) => setTimeout(r, 50));
    expect(c.log).toEqual([]);
    c.raw.write(Buffer.concat([first.subarray(5), clientFrame(recvack('9'))]));
    await c.until(`msg:${recvack('9')}`);
    c.raw.write(clientFrame(recvack('10')));
    await c.until('ack:10');
    c.raw.write(clientFrame('{"end":2}'));
    await c.until('msg:{"end":2}');
    expect(c.log).toEqual(['msg:{"split":true}', `msg:${recvack('9')}`, 'ack:10', 'msg:{"end":2}']);
    c.close();
  });
});
