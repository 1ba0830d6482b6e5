import { beforeAll, describe, expect, it } from 'vitest';
import { PacketType, Setting } from './constants.ts';
import { generateKeyPair, clientKeyExchange, serverKeyExchange, WkSessionCrypto, wkcryptoImplementation } from './crypto.ts';
import { decodePacket } from './decode.ts';
import { encodePacket, encodeRecvack } from './encode.ts';
import { WkprotoCryptoError } from './errors.ts';
import {
  newRecvView,
  recvackFrameBytes,
  scanRecv,
  writeI32Decimal,
  writeI64Decimal,
  writeRecvack,
  writeUDecimal,
  type RecvView,
} from './recv-view.ts';
import type { RecvPacket } from './types.ts';

/** The client's implementation in the tests below (both where the native one is built). */
let clientImplementation: 'native' | 'js' = 'js';

/** A server and a client session that share keys (the client of `clientImplementation`). */
function sessions(): { server: WkSessionCrypto; client: WkSessionCrypto } {
  const keys = generateKeyPair();
  const kx = serverKeyExchange(keys.publicKey);
  const c = clientKeyExchange(keys.privateKey, kx.serverKey, kx.salt);
  return { server: kx.session, client: new WkSessionCrypto(c.aesKey, c.aesIv, clientImplementation) };
}

/** Whether the reference decryption refuses `wire` for its padding (the server's session: same key, the client's state untouched). */
function refusesPadding(s: WkSessionCrypto, wire: Uint8Array): boolean {
  try {
    s.decrypt(wire);
    return false;
  } catch (e) {
    return /padding/.test((e as Error).message);
  }
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
  payload: Buffer.from('s2:p0:0|17|1234.567|xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'),
  ...over,
});

/** The body bounds of a whole frame (1-byte type, varint length). */
function body(frame: Buffer): { start: number; flags: number } {
  let i = 1;
  while ((frame[i]! & 0x80) !== 0) i++;
  return { start: i + 1, flags: frame[0]! & 0x0f };
}

function view(frame: Buffer, version: number): RecvView | undefined {
  const v = newRecvView();
  const b = body(frame);
  return scanRecv(frame, b.start, frame.length, version, b.flags, v) ? v : undefined;
}

describe('decimal text straight from bytes (the RECV sign text)', () => {
  const i64s = [
    0n,
    1n,
    -1n,
    9n,
    10n,
    999_999n,
    1_000_000n,
    2n ** 31n,
    2n ** 32n - 1n,
    2n ** 32n,
    2n ** 32n + 1n,
    2n ** 53n - 1n,
    2n ** 53n + 1n,
  ];
  const edges = [...i64s, ...i64s.map((x) => -x), 2n ** 63n - 1n, -(2n ** 63n), -(2n ** 63n) + 1n, 10n ** 18n, 10n ** 18n - 1n];
  for (let k = 0n; k <= 18n; k++) {
    for (const x of [10n ** k - 1n, 10n ** k, 10n ** k + 1n, 10n ** k * 2n ** 32n - 1n, 10n ** 6n * 2n ** (32n + k) - 1n])
      edges.push(BigInt.asIntN(64, x));
  }
  for (let k = 0; k < 200; k++) edges.push(BigInt.asIntN(64, BigInt(Math.floor(Math.random() * 2 ** 32)) * 2n ** 32n + BigInt(k * 7919)));

  it('writes every int64 as BigInt#toString does, without going through a JS number', () => {
    const src = Buffer.alloc(8);
    const out = Buffer.alloc(32);
    for (const x of edges) {
      src.writeBigInt64BE(x);
      expect(out.toString('latin1', 0, writeI64Decimal(out, 0, src, 0))).toBe(x.toString());
    }
  });

  it('writes u32 and u64 message seqs and int32 timestamps exactly', () => {
    const src = Buffer.alloc(8);
    const out = Buffer.alloc(32);
    for (const x of edges) {
      const u = BigInt.asUintN(64, x);
      src.writeBigUInt64BE(u);
      expect(out.toString('latin1', 0, writeUDecimal(out, 0, src, 0, 8))).toBe(u.toString());
      const u32 = Number(BigInt.asUintN(32, x));
      src.writeUInt32BE(u32);
      expect(out.toString('latin1', 0, writeUDecimal(out, 0, src, 0, 4))).toBe(String(u32));
      const i32 = Number(BigInt.asIntN(32, x));
      expect(out.toString('latin1', 0, writeI32Decimal(out, 0, i32))).toBe(String(i32));
    }
  });
});

const implementations = wkcryptoImplementation.name === 'native' ? (['js', 'native'] as const) : (['js'] as const);
describe.each(implementations)('the in-place RECV path against the reference (openRecv), %s client', (implementation) => {
  beforeAll(() => {
    clientImplementation = implementation;
  });
  for (const version of [3, 4, 5, 6]) {
    it(`V${version}: verifies and decrypts what sealRecv made, in turn with the reference path and sealSend`, () => {
      const { server, client } = sessions();
      const ids = [0n, 1n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 7_300_000_000_000_000_123n, 2n ** 32n];
      for (let i = 0; i < 60; i++) {
        const plain = Buffer.from(`s2:p0:${i}|${i}|${(1000 + i / 3).toFixed(3)}|${'x'.repeat(i)}`);
        const p = recv({
          messageId: ids[i % ids.length]!,
          messageSeq: version === 6 ? 2n ** 40n + BigInt(i) : BigInt(i * 1000),
          timestamp: i % 2 === 0 ? 1_764_000_000 + i : -i,
          clientMsgNo: `no-${i}`,
          channelType: i % 3 === 0 ? 255 : 2,
          payload: plain,
        });
        const frame = encodePacket(server.sealRecv(p), version);
        const v = view(frame, version);
        expect(v).toBeDefined();
        // Alternate with the reference path and with encryption on the same session: the shared CBC state stays right.
        if (i % 3 === 1) expect(client.openRecv(decodePacket(frame, version) as RecvPacket).equals(plain)).toBe(true);
        else if (i % 3 === 2) {
          // The client's path: both checks in one call, the plaintext left in `opened`.
          const n = client.openRecvView(v!);
          expect(n).toBe(plain.length);
          expect(client.opened.subarray(0, n).equals(plain)).toBe(true);
        } else {
          expect(client.verifyRecvView(v!)).toBe(true);
          expect(client.decryptView(v!)?.equals(plain)).toBe(true);
        }
        if (i % 5 === 0)
          client.sealSend({
            ...recv(),
            type: PacketType.SEND,
            clientSeq: i,
            expire: 0,
            topic: '',
            noPersist: false,
            syncOnce: false,
            payload: plain,
          });
      }
    });
  }

  it('rejects a tampered msg_key, a tampered signed field and a tampered payload, as the reference does', () => {
    const { server, client } = sessions();
    const frame = encodePacket(server.sealRecv(recv()), 5);
    const v = view(frame, 5)!;
    expect(client.verifyRecvView(v)).toBe(true);
    const mismatch = (f: Buffer): boolean => {
      try {
        client.openRecv(decodePacket(f, 5) as RecvPacket);
        return false;
      } catch (e) {
        return e instanceof WkprotoCryptoError && e.code === 'MSG_KEY_MISMATCH';
      }
    };
    const tamper = (at: number): Buffer => {
      const f = Buffer.from(frame);
      f[at] = f[at] === 0x41 ? 0x42 : 0x41;
      return f;
    };
    for (const at of [
      v.msgKeyAt,
      v.msgKeyAt + 31,
      v.fromUidAt,
      v.channelIdAt,
      v.clientMsgNoAt,
      v.messageIdAt + 7,
      v.messageSeqAt + 3,
      v.payloadAt,
      frame.length - 3,
    ]) {
      const f = tamper(at);
      expect(client.verifyRecvView(view(f, 5)!)).toBe(false);
      expect(client.openRecvView(view(f, 5)!)).toBe(-1);
      expect(mismatch(f)).toBe(true);
    }
  });

  it('leaves anything but the common shape to the reference decoder', () => {
    const { server } = sessions();
    const shapes: Array<[RecvPacket, number]> = [
      [recv({ setting: Setting.TOPIC, topic: 't' }), 5],
      [recv({ setting: Setting.STREAM, streamNo: 's', streamFlag: 0, streamId: 1n }), 4],
      [recv({ fromUid: 'jörg' }), 5],
      [recv({ clientMsgNo: 'é' }), 5],
    ];
    for (const [p, version] of shapes) expect(view(encodePacket(server.sealRecv(p), version), version)).toBeUndefined();
    const frame = encodePacket(server.sealRecv(recv()), 5);
    expect(view(frame.subarray(0, frame.length - 200), 5)).toBeUndefined();
  });

  it('decryptView declines lenient Base64 and bad padding (the reference decides)', () => {
    const { server, client } = sessions();
    const frame = encodePacket(server.sealRecv(recv()), 5);
    const v = view(frame, 5)!;
    const spaced = Buffer.concat([frame.subarray(0, v.payloadAt), Buffer.from(' '), frame.subarray(v.payloadAt)]);
    const w = newRecvView();
    expect(scanRecv(spaced, body(frame).start, spaced.length, 5, 0, w)).toBe(true);
    expect(client.decryptView(w)).toBeUndefined();
    expect(client.openRecvView(w)).toBe(-1);
    // A whole-block ciphertext whose last block decrypts to garbage padding. The keys are random, and
    // one ciphertext in ~250 ends in valid padding: the first fill the reference refuses is taken.
    const wireOf = (fill: number): Buffer => Buffer.from(Buffer.alloc(32, fill).toString('base64'));
    let fill = 7;
    while (fill < 0xff && refusesPadding(server, wireOf(fill)) === false) fill++;
    expect(refusesPadding(server, wireOf(fill))).toBe(true);
    const bad = Buffer.concat([frame.subarray(0, v.payloadAt), wireOf(fill)]);
    expect(scanRecv(bad, body(frame).start, bad.length, 5, 0, w)).toBe(true);
    expect(client.decryptView(w)).toBeUndefined();
  });

  it('writes RECVACKs byte for byte as encodeRecvack does, back to back', () => {
    const { server } = sessions();
    for (const version of [5, 6]) {
      const out = Buffer.alloc(3 * recvackFrameBytes(version));
      let pos = 0;
      const expected: Buffer[] = [];
      for (const [id, seq] of [
        [-(2n ** 63n), 1n],
        [2n ** 63n - 1n, version === 6 ? 2n ** 64n - 1n : 2n ** 32n - 1n],
        [12345n, 0n],
      ] as const) {
        const v = view(encodePacket(server.sealRecv(recv({ messageId: id, messageSeq: seq })), version), version)!;
        pos = writeRecvack(out, pos, v);
        expected.push(encodeRecvack(id, seq, version));
      }
      expect(pos).toBe(out.length);
      expect(out.equals(Buffer.concat(expected))).toBe(true);
    }
  });
});
