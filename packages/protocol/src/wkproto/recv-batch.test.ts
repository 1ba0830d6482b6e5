/**
 * @parley/wkcrypto's many-reads RECV open (`recvSlot`, `openRecvReads`), the
 * native half of recv-batch.ts: what it takes it opens exactly as the
 * reference path does (the same plaintexts, the RECVACKs `encodeRecvack`
 * writes), and it declines, whole, every read the reference path must decide.
 */
import { Buffer } from 'node:buffer';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { handleOf } from '../net/handle.ts';
import type { NativeSession, WkcryptoNative } from '@parley/wkcrypto';
import { PacketType, Setting } from './constants.ts';
import { clientKeyExchange, generateKeyPair, serverKeyExchange, WkSessionCrypto, wkcryptoImplementation } from './crypto.ts';
import { encodePacket, encodeRecvack } from './encode.ts';
import type { RecvPacket } from './types.ts';

const native = wkcryptoImplementation.name === 'native';

/** A server session and the client's native batch session over the same keys. */
function sessions(): { server: WkSessionCrypto; wk: WkcryptoNative; session: NativeSession } {
  const keys = generateKeyPair();
  const kx = serverKeyExchange(keys.publicKey);
  const c = clientKeyExchange(keys.privateKey, kx.serverKey, kx.salt);
  const batch = new WkSessionCrypto(c.aesKey, c.aesIv, 'native').batchSession;
  if (batch === undefined) throw new Error('no batch session');
  return { server: kx.session, ...batch };
}

const recv = (over: Partial<RecvPacket> = {}): RecvPacket => ({
  type: PacketType.RECV,
  redDot: true,
  setting: 0,
  msgKey: '',
  fromUid: 's2g0pub',
  channelId: 's2g0',
  channelType: 2,
  clientMsgNo: '0123456789abcdef0123456789abcdef',
  messageId: 7_300_000_000_000_000_123n,
  messageSeq: 42n,
  timestamp: 1_764_000_000,
  payload: Buffer.from('s2:p0:0|17|1234.567|xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'),
  ...over,
});

interface Opened {
  /** Per read: undefined when declined, else its frames' RECVACKs and plaintexts. */
  reads: ({ acks: Buffer[]; plains: Buffer[] } | undefined)[];
  /** Per read opened: the RECVACK bytes the call wrote to the slot's socket. */
  acksWritten: number[];
  /** Bytes of out written. */
  written: number;
}

/**
 * Lays `reads` (slot, bytes) out in one batch buffer at scattered offsets
 * (other bytes around each), opens them in one call and parses `out`.
 */
function openReads(wk: WkcryptoNative, reads: [number, Buffer][], version: number, outBytes = 1 << 16): Opened {
  const batch = Buffer.alloc(
    reads.reduce((n, [, b]) => n + b.length + 13, 7),
    0xee,
  );
  const triples = new Int32Array(3 * reads.length);
  let at = 7;
  reads.forEach(([slot, bytes], i) => {
    bytes.copy(batch, at);
    triples.set([slot, at, bytes.length], 3 * i);
    at += bytes.length + 13;
  });
  const out = Buffer.alloc(outBytes, 0xaa);
  const total = wk.openRecvReads(batch, triples, reads.length, out);
  const ackLen = 2 + 8 + (version <= 5 ? 4 : 8);
  const align = (n: number): number => (n + 3) & ~3;
  let p = 0;
  const parsed: Opened['reads'] = [];
  const written: number[] = [];
  for (let i = 0; i < reads.length; i++) {
    const frames = out.readInt32LE(p);
    p += 4;
    if (frames === 0) {
      parsed.push(undefined);
      continue;
    }
    written.push(out.readInt32LE(p));
    p += 4;
    const acks: Buffer[] = [];
    const plains: Buffer[] = [];
    for (let f = 0; f < frames; f++) {
      const len = out.readInt32LE(p);
      acks.push(Buffer.from(out.subarray(p + 4, p + 4 + ackLen)));
      const plainAt = p + 4 + align(ackLen);
      plains.push(Buffer.from(out.subarray(plainAt, plainAt + len)));
      p = plainAt + align(len);
    }
    parsed.push({ acks, plains });
  }
  expect(total).toBe(p);
  return { reads: parsed, acksWritten: written, written: total };
}

describe.runIf(native)('openRecvReads: many sockets’ reads opened in one native call', () => {
  const edges = [0n, 1n, -1n, 9n, 10n, 99n, 100n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n + 1n, 10n ** 18n, 10n ** 18n - 1n];
  const ids = [...edges, ...edges.map((x) => -x), 2n ** 63n - 1n, -(2n ** 63n), 7_300_000_000_000_000_123n];
  for (let k = 0n; k <= 18n; k++) ids.push(BigInt.asIntN(64, 10n ** k - 1n), BigInt.asIntN(64, 10n ** k * 2n ** 32n + 99n));

  for (const version of [3, 4, 5, 6]) {
    it(`V${version}: the plaintexts and RECVACKs of the reference path, for every kind of id, several frames a read`, () => {
      const a = sessions();
      const b = sessions();
      a.wk.recvSlot(3, a.session, version, 1 << 20, -1);
      a.wk.recvSlot(9, b.session, version, 1 << 20, -1);
      const reads: [number, Buffer][] = [];
      const want: { plains: Buffer[]; acks: Buffer[] }[] = [];
      ids.forEach((messageId, i) => {
        const s = i % 2 === 0 ? a : b;
        const frames = 1 + (i % 3);
        const plains: Buffer[] = [];
        const acks: Buffer[] = [];
        const bytes: Buffer[] = [];
        for (let f = 0; f < frames; f++) {
          const plain = Buffer.from(`s2:p0:${i}|${f}|${(1000 + i / 3).toFixed(3)}|${'x'.repeat((i * 7 + f) % 40)}`);
          const messageSeq = version === 6 ? 2n ** 40n + BigInt(i) : BigInt(i * 1000 + f);
          const p = recv({
            messageId,
            messageSeq,
            timestamp: i % 2 === 0 ? 1_764_000_000 + i : -i,
            clientMsgNo: `no-${i}-${f}`,
            channelType: i % 3 === 0 ? 255 : 2,
            payload: plain,
          });
          bytes.push(encodePacket(s.server.sealRecv(p), version));
          plains.push(plain);
          acks.push(encodeRecvack(messageId, messageSeq, version));
        }
        reads.push([i % 2 === 0 ? 3 : 9, Buffer.concat(bytes)]);
        want.push({ plains, acks });
      });
      const got = openReads(a.wk, reads, version);
      expect(got.reads).toStrictEqual(want);
      a.wk.recvSlot(3, null, 1, 0, -1);
      a.wk.recvSlot(9, null, 1, 0, -1);
    });
  }

  it('declines, whole, a read the reference path must decide; the reads around it are still opened', () => {
    const { server, wk, session } = sessions();
    wk.recvSlot(0, session, 5, 1 << 20, -1);
    const ok = (text: string, over: Partial<RecvPacket> = {}): Buffer =>
      encodePacket(server.sealRecv(recv({ payload: Buffer.from(text), ...over })), 5);
    const tampered = server.sealRecv(recv({ payload: Buffer.from('t') }));
    tampered.msgKey = `${tampered.msgKey.slice(0, 31)}${tampered.msgKey.endsWith('0') ? '1' : '0'}`;
    const whole = ok('whole');
    // Base64 with a stray symbol in its first quad, signed as it is: the msg_key verifies, the strict decoding declines.
    const stray = server.sealRecv(recv({ payload: Buffer.from('s'.repeat(40)) }));
    stray.payload = Buffer.from(stray.payload);
    stray.payload[1] = 0x2a; // '*'
    stray.msgKey = server.recvMsgKey(stray);
    const declined: [string, Buffer][] = [
      ['a frame cut short', whole.subarray(0, whole.length - 1)],
      ['a header cut short', Buffer.concat([ok('a'), whole.subarray(0, 1)])],
      ['a RECV then another packet', Buffer.concat([ok('b'), encodePacket({ type: PacketType.PONG }, 5)])],
      ['a bad msg_key after a good RECV', Buffer.concat([ok('c'), encodePacket(tampered, 5)])],
      ['Base64 with a stray symbol', encodePacket(stray, 5)],
      ['a plain RECV', encodePacket(recv({ setting: Setting.NO_ENCRYPT, payload: Buffer.from('p') }), 5)],
      ['a topic', ok('d', { setting: Setting.TOPIC, topic: 'news' })],
      ['a non-ASCII uid', ok('e', { fromUid: 'jörg' })],
      ['a non-ASCII client_msg_no (in its first 8 bytes)', ok('f', { clientMsgNo: 'ab€cdefghijkl' })],
      ['a body above the slot’s largest', ok('g'.repeat(2000))],
    ];
    wk.recvSlot(1, session, 5, 1000, -1);
    const reads: [number, Buffer][] = [[0, ok('before')]];
    for (const [, bytes] of declined) reads.push([0, bytes], [0, ok('between')]);
    reads.splice(reads.length - 2, 1, [1, ok('g'.repeat(2000))]);
    reads.push([2, ok('no slot')]);
    const got = openReads(wk, reads, 5);
    const texts = got.reads.map((r) => r?.plains.map((p) => p.toString()).join(','));
    expect(texts).toStrictEqual(['before', ...declined.flatMap(() => [undefined, 'between']), undefined]);
    wk.recvSlot(0, null, 1, 0, -1);
    wk.recvSlot(1, null, 1, 0, -1);
  });

  it('declines a read whose records would not fit in out, and reads it cleared slots as empty', () => {
    const { server, wk, session } = sessions();
    wk.recvSlot(4, session, 5, 1 << 20, -1);
    const frame = encodePacket(server.sealRecv(recv()), 5);
    const roomy = openReads(wk, [[4, frame]], 5);
    expect(roomy.reads[0]?.plains).toHaveLength(1);
    expect(openReads(wk, [[4, frame]], 5, roomy.written - 1).reads).toStrictEqual([undefined]);
    wk.recvSlot(4, null, 1, 0, -1);
    expect(openReads(wk, [[4, frame]], 5).reads).toStrictEqual([undefined]);
  });

  it('refuses reads outside the batch, an out overlapping it or too small for the counts, and what is not a session', () => {
    const { wk } = sessions();
    const batch = Buffer.alloc(64);
    const out = Buffer.alloc(64);
    expect(() => wk.openRecvReads(batch, Int32Array.of(0, 60, 5), 1, out)).toThrow(/outside the batch/);
    expect(() => wk.openRecvReads(batch, Int32Array.of(0, -1, 5), 1, out)).toThrow(/outside the batch/);
    expect(() => wk.openRecvReads(batch, Int32Array.of(-1, 0, 5), 1, out)).toThrow(/outside the batch/);
    expect(() => wk.openRecvReads(batch, Int32Array.of(0, 0, 5), 2, out)).toThrow(/exceed the reads/);
    expect(() => wk.openRecvReads(batch, Int32Array.of(0, 0, 5), 1, batch.subarray(32))).toThrow(/overlaps/);
    expect(() => wk.openRecvReads(batch, Int32Array.of(0, 0, 5, 0, 0, 5), 2, Buffer.alloc(6))).toThrow(/a count for every read/);
    expect(() => wk.recvSlot(0, {} as NativeSession, 5, 100, -1)).toThrow(/not a session/);
    expect(() => wk.recvSlot(2 ** 20, null, 5, 100, -1)).toThrow(/slot/);
    expect(() => wk.recvSlot(0, null, 0, 100, -1)).toThrow(/version/);
    expect(() => wk.recvSlot(0, null, 5, 100, -2)).toThrow(/fd/);
  });

  /** A connected loopback pair: `writer`'s descriptor for the slot, `reader` collecting what arrives. */
  async function socketPair(): Promise<{ writer: Socket; reader: Socket; fd: number; close(): void }> {
    const l = createServer();
    l.listen(0, '127.0.0.1');
    await once(l, 'listening');
    const accepted = once(l, 'connection');
    const writer = connect((l.address() as AddressInfo).port, '127.0.0.1');
    await once(writer, 'connect');
    const [reader] = (await accepted) as [Socket];
    const fd = handleOf<{ fd: number }>(writer)!.fd;
    return { writer, reader, fd, close: () => (writer.destroy(), reader.destroy(), l.close()) };
  }

  it('writes each read’s RECVACKs to the slot’s socket in one write, in order, and says so', async () => {
    const { server, wk, session } = sessions();
    const pair = await socketPair();
    try {
      wk.recvSlot(5, session, 5, 1 << 20, pair.fd);
      const ids = [[1n, 2n], [3n], [4n, 5n, 6n]];
      const got = openReads(
        wk,
        ids.map((read) => [5, Buffer.concat(read.map((id) => encodePacket(server.sealRecv(recv({ messageId: id, messageSeq: id })), 5)))]),
        5,
      );
      const want = Buffer.concat(ids.flat().map((id) => encodeRecvack(id, id, 5)));
      expect(got.acksWritten).toStrictEqual(ids.map((read) => read.length * 14));
      const received: Buffer[] = [];
      pair.reader.on('data', (d: Buffer) => received.push(d));
      const end = Date.now() + 2000;
      while (Buffer.concat(received).length < want.length && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
      expect(Buffer.concat(received)).toStrictEqual(want);
      wk.recvSlot(5, null, 1, 0, -1);
    } finally {
      pair.close();
    }
  });

  it('hands back the RECVACKs the kernel does not take, and writes none itself after', async () => {
    const { server, wk, session } = sessions();
    const pair = await socketPair();
    try {
      // The reader reads nothing: fill both socket buffers until the kernel takes no more.
      pair.reader.pause();
      const chunk = Buffer.alloc(1 << 20);
      for (let i = 0; i < 64 && pair.writer.writableLength === 0; i++) {
        pair.writer.write(chunk);
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(pair.writer.writableLength).toBeGreaterThan(0);
      wk.recvSlot(6, session, 5, 1 << 20, pair.fd);
      const read = (id: bigint): [number, Buffer] => [6, encodePacket(server.sealRecv(recv({ messageId: id })), 5)];
      const first = openReads(wk, [read(1n)], 5);
      expect(first.reads[0]?.acks).toStrictEqual([encodeRecvack(1n, 42n, 5)]);
      expect(first.acksWritten).toStrictEqual([0]);
      // The slot has no descriptor now: still none written.
      expect(openReads(wk, [read(2n)], 5).acksWritten).toStrictEqual([0]);
      wk.recvSlot(6, null, 1, 0, -1);
    } finally {
      pair.close();
    }
  });

  it('stops writing for a slot told to (recvSlotStopWrites)', async () => {
    const { server, wk, session } = sessions();
    const pair = await socketPair();
    try {
      wk.recvSlot(7, session, 5, 1 << 20, pair.fd);
      wk.recvSlotStopWrites(7);
      expect(openReads(wk, [[7, encodePacket(server.sealRecv(recv()), 5)]], 5).acksWritten).toStrictEqual([0]);
      wk.recvSlot(7, null, 1, 0, -1);
    } finally {
      pair.close();
    }
  });
});
