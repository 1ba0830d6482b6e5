/**
 * The JSON-RPC client's in-place `recv` reader against the reference path
 * (`JSON.parse` of the frame's text, the recvack text built from its fields):
 * whatever the fast path accepts it must read exactly as the reference does,
 * on the server's own frames and on mutations of them; and it must accept the
 * server's frames of the bench's shape (else nothing is gained).
 */
import { encodeRecv, recvPayloadJson, type RecvFields } from '@parley/protocol/jsonrpc';
import { describe, expect, it } from 'vitest';
import { plainWord, readRecv, recvAt, takeRecvs, writeRecvack } from '../src/drivers/jsonrpc-recv-fast.ts';

/** What the reference path makes of a frame's text: undefined when it is no `recv`, throws when it is no JSON. */
function reference(text: string): { ack: string; body: string } | undefined {
  const frame = JSON.parse(text) as { method?: string; params?: { messageId: string; messageSeq: number; payload: { b?: unknown } } };
  if (frame.method !== 'recv' || !text.startsWith('{"jsonrpc":"2.0","method":"recv"')) return undefined;
  const p = frame.params!;
  return {
    ack: `{"jsonrpc":"2.0","method":"recvack","params":{"messageId":"${p.messageId}","messageSeq":${p.messageSeq}}}`,
    body: typeof p.payload?.b === 'string' ? p.payload.b : JSON.stringify(p.payload),
  };
}

/** The unmasked text of the one masked client frame at `out[0, end)`. */
function unmaskAck(out: Uint8Array, end: number): string {
  expect(out[0]).toBe(0x81);
  expect(out[1]! & 0x80).toBe(0x80);
  const len = out[1]! & 0x7f;
  expect(end).toBe(6 + len);
  const text = Buffer.alloc(len);
  for (let k = 0; k < len; k++) text[k] = out[6 + k]! ^ out[2 + (k & 3)]!;
  return text.toString('latin1');
}

/** What the fast path makes of `text`: undefined when it declines. */
function fast(text: string): { ack: string; body: string } | undefined {
  // Surrounding bytes: the reader must stay inside [start, end).
  const buf = Buffer.concat([Buffer.from('xx'), Buffer.from(text, 'utf8'), Buffer.from('}"')]);
  if (!readRecv(buf, 2, buf.length - 2)) return undefined;
  const out = new Uint8Array(256);
  const end = writeRecvack(buf, out, 0);
  return { ack: unmaskAck(out, end), body: buf.toString('utf8', recvAt.bodyStart, recvAt.bodyEnd) };
}

/** Checks the property on one text: declined, or read as the reference reads it. */
function agrees(text: string): boolean {
  const f = fast(text);
  if (f === undefined) return false;
  let r: { ack: string; body: string } | undefined;
  try {
    r = reference(text);
  } catch (e) {
    throw new Error(`fast path accepted text that is no JSON: ${text}`, { cause: e });
  }
  expect(f, text).toEqual(r);
  return true;
}

const base: RecvFields = {
  redDot: true,
  syncOnce: false,
  noPersist: false,
  setting: 0,
  expire: 0,
  messageId: '7311258123456789012',
  messageSeq: 42,
  clientMsgNo: 's2p0-17',
  timestamp: 1764030000,
  channelId: 's2g0',
  channelType: 2,
  topic: '',
  fromUid: 's2p0',
};
const body = 's2:g50:0|17|123456.789|xxxxxxxxxxxxxxxx';
const payload = (b: string): string => recvPayloadJson(Buffer.from(JSON.stringify({ b })));

describe('readRecv against the reference path', () => {
  it('reads the server frames of the bench shape as the reference does', () => {
    const cases: Array<[Partial<RecvFields>, string]> = [
      [{}, body],
      [{ redDot: false }, body],
      [{ redDot: true, syncOnce: true, noPersist: true }, body],
      [{ messageId: '1', messageSeq: 0, timestamp: 0, channelType: 1 }, body],
      [{ messageId: '18446744073709551615', messageSeq: 999_999_999_999_999 }, body],
      [{ clientMsgNo: '', channelId: 'g ~!#$%&()*+,-./:;<=>?@[]^_`{|}', fromUid: "'" }, ''],
      [{}, 'x'.repeat(5000)],
    ];
    for (const [fields, b] of cases) {
      const text = encodeRecv({ ...base, ...fields }, payload(b));
      expect(agrees(text), text).toBe(true);
    }
  });

  it('declines other shapes, which the reference path reads', () => {
    const declined = [
      encodeRecv({ ...base, setting: 0x08, topic: 't' }, payload(body)),
      encodeRecv({ ...base, expire: 60 }, payload(body)),
      encodeRecv(base, payload('é|1|2|')),
      encodeRecv(base, payload('a"b')),
      encodeRecv(base, payload('a\\b')),
      encodeRecv(base, payload('a\nb')),
      encodeRecv({ ...base, clientMsgNo: 'ü' }, payload(body)),
      encodeRecv({ ...base, messageId: '123456789012345678901' }, payload(body)),
      encodeRecv({ ...base, messageSeq: 1e16 }, payload(body)),
      encodeRecv(base, '{"b":"x","c":1}'),
      encodeRecv(base, '{"c":"x"}'),
      encodeRecv(base, '{"b":1}'),
      encodeRecv(base, '"AAEC"'),
      encodeRecv(base, payload(body)).replace('"messageId":"', '"messageId": "'),
      encodeRecv(base, payload(body)).replace('"messageId":"7', '"messageId":"-7'),
      encodeRecv(base, payload(body)).replace('{"redDot":true}', '{"redDot":false}'),
      encodeRecv(base, payload(body)).replace('"messageSeq":42', '"messageSeq":42.5'),
      encodeRecv(base, payload(body)).replace('"messageSeq":42', '"messageSeq":4e2'),
      `${encodeRecv(base, payload(body))} `,
      encodeRecv(base, payload(body)).replace('{"redDot":true}', '{"":true}'),
    ];
    for (const text of declined) {
      expect(reference(text), text).toBeDefined();
      expect(fast(text), text).toBeUndefined();
    }
  });

  it('declines what is no JSON where the reference throws (leading zeros, truncation, trailing bytes)', () => {
    const text = encodeRecv(base, payload(body));
    for (const bad of [
      text.replace('"messageSeq":42', '"messageSeq":042'),
      text.replace('"timestamp":1764030000', '"timestamp":01764030000'),
      text.replace('"channelType":2', '"channelType":02'),
      text.slice(0, -1),
      `${text}}`,
      text.replace('{"redDot":true}', '{"redDot":true,}'),
    ]) {
      expect(() => JSON.parse(bad), bad).toThrow();
      expect(fast(bad), bad).toBeUndefined();
    }
  });

  it('agrees with the reference on every single-byte mutation of a frame', () => {
    const text = encodeRecv({ ...base, syncOnce: true }, payload('s|1|2.5|'));
    // Bytes that matter to JSON and to the reader: structure, digits, letters, escapes, control, non-ASCII.
    const alphabet = ['"', '\\', '{', '}', ',', ':', ' ', '0', '1', '9', '-', '.', 'e', 'b', 'x', 't', '\n', '\u0000', 'é', ']'];
    let accepted = 0;
    for (let i = 0; i < text.length; i++) {
      for (const c of alphabet) {
        if (agrees(text.slice(0, i) + c + text.slice(i + 1))) accepted++;
        if (agrees(text.slice(0, i) + c + text.slice(i))) accepted++;
      }
      if (agrees(text.slice(0, i) + text.slice(i + 1))) accepted++;
    }
    // Some mutations keep the shape (digits in numbers, letters in strings): those are compared above.
    expect(accepted).toBeGreaterThan(100);
  });
});

/** An unmasked server text frame of `text`. */
function serverFrame(text: string, first = 0x81): Buffer {
  const data = Buffer.from(text, 'utf8');
  const head = data.length < 126 ? Buffer.from([first, data.length]) : Buffer.from([first, 126, data.length >> 8, data.length & 0xff]);
  return Buffer.concat([head, data]);
}

/** Runs takeRecvs over `chunk`: the bodies read, the recvack texts written, the bytes taken. */
function take(chunk: Buffer, maxPayload = 0): { taken: number; bodies: string[]; acks: string[] } {
  const bodies: string[] = [];
  const outs = { out: new Uint8Array(8) };
  const r = takeRecvs(chunk, 0, chunk.length, maxPayload, outs, (buf, s, e) =>
    bodies.push(Buffer.from(buf.subarray(s, e)).toString('utf8')),
  );
  const acks: string[] = [];
  for (let at = 0; at < r.ackBytes;) {
    const len = outs.out[at + 1]! & 0x7f;
    acks.push(unmaskAck(outs.out.subarray(at, at + 6 + len), 6 + len));
    at += 6 + len;
  }
  return { taken: r.taken, bodies, acks };
}

describe('takeRecvs over a chunk', () => {
  const recvText = (n: number, b = `s|${n}|1.5|`): string => encodeRecv({ ...base, messageId: `${1000 + n}`, messageSeq: n }, payload(b));

  it('reads every whole recv frame (7- and 16-bit lengths), their recvacks as the reference writes them', () => {
    const texts = [recvText(1), recvText(2, 'y'.repeat(300)), recvText(3)];
    const r = take(Buffer.concat(texts.map((t) => serverFrame(t))));
    expect(r.taken).toBe(Buffer.concat(texts.map((t) => serverFrame(t))).length);
    expect(r.bodies).toEqual(texts.map((t) => reference(t)!.body));
    expect(r.acks).toEqual(texts.map((t) => reference(t)!.ack));
  });

  it('stops at the first frame of another kind, or one not wholly in the chunk', () => {
    const a = serverFrame(recvText(1));
    const result = serverFrame('{"jsonrpc":"2.0","id":3,"result":{"reasonCode":1}}');
    const b = serverFrame(recvText(2));
    for (const [rest, why] of [
      [result, 'a send result'],
      [b.subarray(0, b.length - 1), 'a partial frame'],
      [b.subarray(0, 1), 'a partial header'],
      [serverFrame(recvText(2), 0x01), 'a first fragment'],
      [serverFrame(recvText(2), 0x80), 'a continuation'],
      [serverFrame(recvText(2), 0xc1), 'an RSV1 frame'],
      [Buffer.from([0x89, 0x00]), 'a ping'],
    ] as const) {
      const r = take(Buffer.concat([a, rest, b]));
      expect(r.taken, why).toBe(a.length);
      expect(r.acks, why).toEqual([reference(recvText(1))!.ack]);
    }
    // Bytes at n and past it are not the read's (the shared read buffer holds an older read there).
    const both = Buffer.concat([a, b]);
    expect(takeRecvs(both, 0, both.length - 1, 0, { out: new Uint8Array(8) }, () => undefined).taken).toBe(a.length);
    expect(takeRecvs(both, 0, both.length, 0, { out: new Uint8Array(8) }, () => undefined).taken).toBe(both.length);
    // Nor are the bytes before the read's start (the read pump's batch holds other sockets' reads there).
    const after = Buffer.concat([Buffer.from(b), both]);
    expect(takeRecvs(after, b.length, after.length - 1, 0, { out: new Uint8Array(8) }, () => undefined).taken).toBe(b.length + a.length);
    expect(takeRecvs(after, b.length, after.length, 0, { out: new Uint8Array(8) }, () => undefined).taken).toBe(after.length);
    // A masked server frame (no server sends one: ws refuses it) is ws's.
    const masked = Buffer.from(a);
    masked[1]! |= 0x80;
    expect(take(masked).taken).toBe(0);
    // Above ws's maxPayload: ws's to refuse.
    const len = Buffer.byteLength(recvText(1));
    expect(take(a, len - 1).taken).toBe(0);
    expect(take(a, len).taken).toBe(a.length);
  });

  it('masks each recvack with its own key', () => {
    const chunk = Buffer.concat([serverFrame(recvText(1)), serverFrame(recvText(2))]);
    const outs = { out: new Uint8Array(1024) };
    const r = takeRecvs(chunk, 0, chunk.length, 0, outs, () => undefined);
    const first = outs.out.subarray(2, 6);
    const len = outs.out[1]! & 0x7f;
    const second = outs.out.subarray(6 + len + 2, 6 + len + 6);
    expect(r.ackBytes).toBeGreaterThan(6 + len);
    expect(Buffer.from(first).equals(Buffer.from(second))).toBe(false);
  });
});

describe('plainWord: four string bytes checked at once', () => {
  const plain = (c: number): boolean => c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c;
  const word = (b: number[]): number => b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24) | 0;

  it('agrees with the byte rule for every byte value in every position', () => {
    for (let pos = 0; pos < 4; pos++)
      for (let c = 0; c < 256; c++) {
        const b = [0x61, 0x7e, 0x20, 0x30];
        b[pos] = c;
        expect(plainWord(word(b)), `byte 0x${c.toString(16)} at ${pos}`).toBe(plain(c));
      }
  });

  it('agrees with it on random words', () => {
    for (let k = 0; k < 20000; k++) {
      const b = [0, 1, 2, 3].map(() => (Math.random() < 0.7 ? 0x20 + Math.floor(Math.random() * 0x5f) : Math.floor(Math.random() * 256)));
      expect(plainWord(word(b)), b.join(',')).toBe(b.every(plain));
    }
  });
});
