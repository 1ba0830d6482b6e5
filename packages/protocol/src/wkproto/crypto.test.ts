import { createCipheriv, createDecipheriv, createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PacketType, Setting } from './constants.ts';
import {
  clientKeyExchange,
  deriveAesKey,
  generateKeyPair,
  keyPairFromPrivate,
  randomSalt,
  recvTemplate,
  RECV_FIELDS,
  serverKeyExchange,
  sharedSecret,
  WkSessionCrypto,
  wkcryptoImplementation,
} from './crypto.ts';
import { decodePacket } from './decode.ts';
import { encodePacket } from './encode.ts';
import { WkprotoCryptoError } from './errors.ts';
import type { RecvPacket, SendPacket } from './types.ts';

const h = (s: string): Buffer => Buffer.from(s, 'hex');
const cryptoCode = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof WkprotoCryptoError) return e.code;
    throw e;
  }
  return 'no error';
};

describe('X25519 key exchange and AES key derivation', () => {
  // RFC 7748 §6.1 key pairs; the AES key was computed with Python's hashlib: md5(base64(shared)).hexdigest()[:16].
  const alice = keyPairFromPrivate(h('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a'));
  const bob = keyPairFromPrivate(h('5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb'));

  it('matches the RFC 7748 vector and the hand-computed AES key', () => {
    expect(Buffer.from(alice.publicKey, 'base64').toString('hex')).toBe('8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a');
    const shared = sharedSecret(alice.privateKey, bob.publicKey);
    expect(shared.toString('hex')).toBe('4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742');
    expect(sharedSecret(bob.privateKey, alice.publicKey).equals(shared)).toBe(true);
    expect(deriveAesKey(shared)).toBe('0c15fdbf4d09bc6c');
  });

  it('server and client sides derive the same session', () => {
    const client = generateKeyPair();
    const server = serverKeyExchange(client.publicKey);
    expect(server.salt).toMatch(/^[a-zA-Z0-9]{16}$/);
    const mine = clientKeyExchange(client.privateKey, server.serverKey, server.salt);
    expect(mine.aesKey).toBe(server.session.aesKey);
    expect(mine.aesIv).toBe(server.salt);
    expect(clientKeyExchange(client.privateKey, server.serverKey, `${server.salt}extra`).aesIv).toBe(server.salt);
  });

  it('makes key pairs without hanging while garbage collections finalize key-generation jobs', async () => {
    // Node 20 deadlocks when a collection finalizes a key-generation job during a JWK export of
    // its key (crypto.ts, BASE_POINT); a small young generation makes collections frequent. The
    // JWK export this replaced hung in every one of eight such runs of 5,000 rounds. Both paths:
    // Node's key generation (PARLEY_WKCRYPTO=js) and the native one.
    const { spawn } = await import('node:child_process');
    const rounds = 5000;
    const run = (implementation: string) => {
      const child = spawn(
        process.execPath,
        [
          '--max-semi-space-size=1',
          '--import',
          'tsx',
          '-e',
          `import(${JSON.stringify(new URL('./crypto.ts', import.meta.url).href)}).then((m) => {
            const peer = m.generateKeyPair();
            for (let i = 0; i < ${rounds}; i++) m.generateKeyPair();
            m.serverKeyExchange(peer.publicKey);
            console.log(m.wkcryptoImplementation.name);
          })`,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PARLEY_WKCRYPTO: implementation } },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      return new Promise<string>((resolve) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          resolve('hung');
        }, 40_000);
        child.on('exit', (code) => {
          clearTimeout(timer);
          resolve(code === 0 ? out.trim() : `exit ${code}`);
        });
      });
    };
    expect(await run('js')).toBe('js');
    if (wkcryptoImplementation.name === 'native') expect(await run('native')).toBe('native');
  }, 90_000);

  it('rejects every client key that is not Standard Base64 of exactly 32 bytes', () => {
    const { privateKey } = generateKeyPair();
    const good = generateKeyPair().publicKey;
    const b64 = (n: number): string => Buffer.alloc(n, 9).toString('base64');
    for (const bad of [
      '',
      b64(31),
      b64(33),
      good.slice(0, -1),
      good.replace(/=$/, 'A'),
      `${good} `,
      Buffer.from(good, 'base64').toString('base64url'),
      'not base64 at all !!!!!!!!!!!!!!!!!!!!!!!!!',
      b64(32).replace(/.=$/, 'B='),
    ]) {
      expect(
        cryptoCode(() => sharedSecret(privateKey, bad)),
        bad,
      ).toBe('BAD_PUBLIC_KEY');
    }
    expect(cryptoCode(() => sharedSecret(privateKey, b64(32)))).toBe('no error');
    expect(cryptoCode(() => sharedSecret(privateKey, Buffer.alloc(32).toString('base64')))).toBe('BAD_PUBLIC_KEY');
    expect(cryptoCode(() => serverKeyExchange(b64(31)))).toBe('BAD_PUBLIC_KEY');
  });

  it('refuses the same low-order client keys whichever path makes the server key pair', () => {
    // RFC 7748 §5's small-order points (and their non-canonical encodings): their secret is all zeros.
    const lowOrder = [
      '0000000000000000000000000000000000000000000000000000000000000000',
      '0100000000000000000000000000000000000000000000000000000000000000',
      'e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800',
      '5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157',
      'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
      'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
      'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
    ];
    for (const hex of lowOrder) {
      const key = h(hex).toString('base64');
      expect(
        cryptoCode(() => serverKeyExchange(key)),
        hex,
      ).toBe('BAD_PUBLIC_KEY');
      expect(
        cryptoCode(() => serverKeyExchange(key, generateKeyPair())),
        hex,
      ).toBe('BAD_PUBLIC_KEY');
    }
    const client = generateKeyPair();
    for (let i = 0; i < 20; i++) {
      const server = serverKeyExchange(client.publicKey);
      expect(clientKeyExchange(client.privateKey, server.serverKey, server.salt).aesKey).toBe(server.session.aesKey);
    }
  });

  it('refuses low-order and malformed server keys on the client side', () => {
    const client = generateKeyPair();
    for (const key of [
      Buffer.alloc(32).toString('base64'),
      h('e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800').toString('base64'),
      Buffer.alloc(31, 9).toString('base64'),
      'not a key',
    ]) {
      expect(
        cryptoCode(() => clientKeyExchange(client.privateKey, key, 'abcdefghijklmnop')),
        key,
      ).toBe('BAD_PUBLIC_KEY');
    }
    // The key still works after a refusal.
    const server = serverKeyExchange(client.publicKey);
    expect(clientKeyExchange(client.privateKey, server.serverKey, server.salt).aesKey).toBe(server.session.aesKey);
  });

  it('salts are 16 characters of [a-zA-Z0-9] and vary', () => {
    const salts = new Set(Array.from({ length: 50 }, () => randomSalt()));
    expect(salts.size).toBe(50);
    for (const s of salts) expect(s).toMatch(/^[a-zA-Z0-9]{16}$/);
  });
});

describe('payload crypto and msg_key', () => {
  const s = new WkSessionCrypto('0c15fdbf4d09bc6c', 'abcdefghijklmnop');
  const plain = Buffer.from('{"content":"hi","type":1}');
  // Vectors computed with the openssl CLI: `openssl enc -aes-128-cbc -K <hex key> -iv <hex iv> -base64 -A`, then md5sum.
  const wire = 'ozuhJ1HEIaov0gJsW2O6iv1TpFIEcAPghtbIhDn5PcE=';

  it('encrypts to the openssl vector (Base64 text) and decrypts back', () => {
    expect(s.encrypt(plain).toString('latin1')).toBe(wire);
    expect(s.decrypt(Buffer.from(wire)).equals(plain)).toBe(true);
    expect(s.decrypt(s.encrypt(Buffer.alloc(0))).length).toBe(0);
  });

  it('computes the SEND msg_key of the openssl vector', () => {
    const p = { clientSeq: 1, clientMsgNo: 'cmn', channelId: 'bob', channelType: 1, payload: Buffer.from(wire) };
    expect(s.sendMsgKey(p)).toBe('97eae84e117b7ec7731e5689731505d8');
  });

  it('seals and opens SEND and RECV, and detects tampering', () => {
    const send: SendPacket = {
      type: PacketType.SEND,
      setting: 0,
      clientSeq: 3,
      clientMsgNo: 'n',
      channelId: 'ch',
      channelType: 2,
      msgKey: '',
      payload: plain,
    };
    const sealedSend = s.sealSend(send);
    expect(sealedSend.msgKey).toMatch(/^[0-9a-f]{32}$/);
    expect(s.openSend(sealedSend).equals(plain)).toBe(true);
    expect(cryptoCode(() => s.openSend({ ...sealedSend, clientSeq: 4 }))).toBe('MSG_KEY_MISMATCH');
    const forged = { ...sealedSend, payload: Buffer.from('AAAA') };
    expect(cryptoCode(() => s.openSend({ ...forged, msgKey: s.sendMsgKey(forged) }))).toBe('DECRYPT_FAILED');

    const recv: RecvPacket = {
      type: PacketType.RECV,
      setting: 0,
      msgKey: '',
      fromUid: 'ünï',
      channelId: 'bob',
      channelType: 1,
      clientMsgNo: 'n',
      messageId: 1957234823423213568n,
      messageSeq: 42n,
      timestamp: 1785398400,
      payload: plain,
    };
    const sealedRecv = s.sealRecv(recv);
    expect(s.openRecv(sealedRecv).equals(plain)).toBe(true);
    expect(cryptoCode(() => s.openRecv({ ...sealedRecv, messageSeq: 43n }))).toBe('MSG_KEY_MISMATCH');
  });

  it('leaves noEncrypt packets unencrypted, and opens one into a copy', () => {
    const send: SendPacket = {
      type: PacketType.SEND,
      setting: Setting.NO_ENCRYPT,
      clientSeq: 1,
      clientMsgNo: '',
      channelId: 'c',
      channelType: 1,
      msgKey: '',
      payload: plain,
    };
    expect(s.sealSend(send)).toBe(send);
    expect(s.openSend(send).equals(plain)).toBe(true);
    // The plaintext is a copy: the read it was decoded from may be overwritten.
    const read = Buffer.from(plain);
    const opened = s.openSend({ ...send, payload: read });
    read.fill(0);
    expect(opened.equals(plain)).toBe(true);
  });

  it('rejects keys and IVs that are not 16 ASCII characters', () => {
    expect(cryptoCode(() => new WkSessionCrypto('short', 'abcdefghijklmnop'))).toBe('BAD_SALT');
    expect(cryptoCode(() => new WkSessionCrypto('0c15fdbf4d09bc6c', 'abcdefghijklmnoé'))).toBe('BAD_SALT');
  });
});

describe('session crypto reusing one cipher per direction', () => {
  // The reference: a fresh AES-128-CBC/PKCS#7 cipher per operation, as OpenSSL does it.
  const key = 'K3y-0f_16_chars!';
  const iv = 'Iv0123456789abcd';
  const refEncrypt = (plain: Uint8Array): Buffer => {
    const c = createCipheriv('aes-128-cbc', Buffer.from(key), Buffer.from(iv));
    return Buffer.concat([c.update(plain), c.final()]);
  };
  const refDecrypt = (raw: Uint8Array): Buffer => {
    const d = createDecipheriv('aes-128-cbc', Buffer.from(key), Buffer.from(iv));
    return Buffer.concat([d.update(raw), d.final()]);
  };
  const refMsgKey = (sign: string, payload: Uint8Array): string =>
    createHash('md5')
      .update(refEncrypt(Buffer.concat([Buffer.from(sign, 'utf8'), payload])).toString('base64'), 'latin1')
      .digest('hex');
  const bytes = (n: number, seed: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => (i * 131 + seed * 7) & 0xff));

  it('encrypts, decrypts and signs byte for byte like a fresh cipher, interleaved over 0..100 and block-edge lengths', () => {
    const s = new WkSessionCrypto(key, iv);
    const peer = new WkSessionCrypto(key, iv);
    const lengths = [...Array.from({ length: 101 }, (_, n) => n), 127, 128, 129, 255, 256, 257, 1023, 1024, 4096 + 15];
    for (const [k, n] of lengths.entries()) {
      const plain = bytes(n, k);
      const wire = s.encrypt(plain);
      expect(wire.toString('latin1'), `encrypt ${n}`).toBe(refEncrypt(plain).toString('base64'));
      // Decrypt on another session (interleaved with its own encryptions) and on the sending one.
      expect(peer.decrypt(wire).equals(plain), `peer decrypt ${n}`).toBe(true);
      peer.encrypt(bytes(k % 40, n));
      expect(s.decrypt(wire).equals(plain), `own decrypt ${n}`).toBe(true);
      expect(refDecrypt(Buffer.from(wire.toString('latin1'), 'base64')).equals(plain)).toBe(true);
      const send = { clientSeq: k, clientMsgNo: `cmn${n}`, channelId: 'chän', channelType: 2, payload: wire };
      expect(s.sendMsgKey(send), `msg_key ${n}`).toBe(refMsgKey(`${k}cmn${n}chän2`, wire));
    }
  });

  it('makes no cipher until a session needs one, and decrypting first or encrypting first gives the same bytes', () => {
    const idle = new WkSessionCrypto(key, iv) as unknown as Record<string, unknown>;
    // An idle connection's session (the common case) holds no OpenSSL context and no scratch buffer.
    expect([idle.cipher, idle.decipher, idle.scratch]).toEqual([undefined, undefined, undefined]);
    const wire = refEncrypt(bytes(33, 3)).toString('base64');
    const decFirst = new WkSessionCrypto(key, iv);
    expect(decFirst.decrypt(Buffer.from(wire, 'latin1')).equals(bytes(33, 3))).toBe(true);
    expect(decFirst.encrypt(bytes(20, 4)).toString('latin1')).toBe(refEncrypt(bytes(20, 4)).toString('base64'));
    const encFirst = new WkSessionCrypto(key, iv);
    expect(encFirst.encrypt(bytes(20, 4)).toString('latin1')).toBe(refEncrypt(bytes(20, 4)).toString('base64'));
    expect(encFirst.decrypt(Buffer.from(wire, 'latin1')).equals(bytes(33, 3))).toBe(true);
  });

  it('keeps working after a refused ciphertext, and refuses what a fresh decipher refuses', () => {
    const s = new WkSessionCrypto(key, iv);
    const good = refEncrypt(bytes(40, 1));
    const cases: Buffer[] = [];
    // Flip bits in the last block (corrupts the padding) and in the one before it.
    for (let bit = 0; bit < 64; bit++) {
      const c = Buffer.from(good);
      c[c.length - 1 - (bit % 32)]! ^= 1 << (bit % 8);
      cases.push(c);
    }
    cases.push(good.subarray(0, 16), refEncrypt(Buffer.alloc(0)), Buffer.alloc(32));
    // Ciphertexts of unpadded blocks whose last bytes are (in)valid PKCS#7 padding.
    const raw = (last: number[]): Buffer => {
      const c = createCipheriv('aes-128-cbc', Buffer.from(key), Buffer.from(iv)).setAutoPadding(false);
      const plain = Buffer.concat([bytes(32 - last.length, 5), Buffer.from(last)]);
      return Buffer.concat([c.update(plain), c.final()]);
    };
    for (const last of [
      [0],
      [17],
      [255],
      [1],
      [2, 2],
      [3, 2],
      [2, 3, 3],
      new Array<number>(16).fill(16),
      [15, ...new Array<number>(15).fill(16)],
    ]) {
      cases.push(raw(last));
    }
    for (const c of cases) {
      let ref: Buffer | undefined;
      try {
        ref = refDecrypt(c);
      } catch {
        ref = undefined;
      }
      const wire = Buffer.from(c.toString('base64'));
      if (ref === undefined) expect(cryptoCode(() => s.decrypt(wire))).toBe('DECRYPT_FAILED');
      else expect(s.decrypt(wire).equals(ref)).toBe(true);
      expect(s.decrypt(Buffer.from(good.toString('base64'))).equals(bytes(40, 1))).toBe(true);
    }
    expect(cryptoCode(() => s.decrypt(Buffer.from('')))).toBe('DECRYPT_FAILED');
    expect(cryptoCode(() => s.decrypt(Buffer.from('AAAA')))).toBe('DECRYPT_FAILED');
    // Base64 that is not strict (no padding, a line break, URL-safe symbols) is read as Buffer.from(text, 'base64') reads it.
    const seed = Array.from({ length: 64 }, (_, k) => k).find((k) => /[+/]/.test(refEncrypt(bytes(5, k)).toString('base64')))!;
    const short = refEncrypt(bytes(5, seed)).toString('base64');
    const urlSafe = short.replace(/\+/g, '-').replace(/\//g, '_');
    expect(short.endsWith('==')).toBe(true);
    expect(urlSafe).not.toBe(short);
    for (const text of [short.slice(0, -2), `${short.slice(0, 8)}\n${short.slice(8)}`, urlSafe]) {
      expect(s.decrypt(Buffer.from(text, 'latin1')).equals(bytes(5, seed)), text).toBe(true);
    }
  });
});

describe('RECV templates', () => {
  const server = new WkSessionCrypto('0c15fdbf4d09bc6c', 'abcdefghijklmnop');
  const other = new WkSessionCrypto('fedcba9876543210', 'ponmlkjihgfedcba');
  const base = (channelId: string, extra: Partial<RecvPacket>): RecvPacket => ({
    type: PacketType.RECV,
    setting: 0,
    msgKey: '',
    fromUid: 'ünï',
    channelId,
    channelType: 2,
    clientMsgNo: 'cmn-1',
    messageId: 1957234823423213568n,
    messageSeq: 4_000_000_000n,
    timestamp: 1785398400,
    payload: Buffer.alloc(0),
    ...extra,
  });

  it('seal into the same bytes as encodePacket(sealRecv(…)) for every version, flag and length, sessions interleaved', () => {
    const lengths = [0, 1, 15, 16, 17, 31, 32, 33, 47, 48, 64, 100, 200, 1000, 4079, 4080, 5000];
    // ASCII strings take the direct writer, a non-ASCII sender or a topic the generic encoder.
    const views: Partial<RecvPacket>[] = [
      {},
      { redDot: true, dup: true },
      { setting: Setting.TOPIC, topic: 'tópic', expire: 3600, syncOnce: true, noPersist: true },
      { setting: Setting.RECEIPT, channelType: 1 },
      { fromUid: 'u-000123', expire: 60 },
      { fromUid: 'u-000123', messageId: -5n, timestamp: -1, setting: Setting.RECEIPT | Setting.STREAM },
    ];
    for (let version = 1; version <= 6; version++) {
      for (const [i, view] of views.entries()) {
        for (const n of lengths) {
          const plain = Buffer.from(Array.from({ length: n }, (_, k) => (k * 17 + n + i) & 0xff));
          // A long channel id makes the body's varint length take more bytes.
          const p = base(i === 3 ? 'x'.repeat(300) : `grp${i}`, view);
          const t = recvTemplate(p, n, version);
          for (const s of [server, other, server]) {
            const want = encodePacket(s.sealRecv({ ...p, payload: plain }), version);
            expect(s.sealRecvFrame(t, plain).equals(want), `v${version} view${i} n${n}`).toBe(true);
            expect(s.openRecv(decodePacket(want, version) as RecvPacket).equals(plain)).toBe(true);
          }
          expect(t.frame.length).toBe(encodePacket(server.sealRecv({ ...p, payload: plain }), version).length);
        }
      }
    }
  });

  it('seal a template with the plaintext each call passes, whatever was sealed with it before', () => {
    const p = base('grp', {});
    const t = recvTemplate(p, 20, 5);
    for (const fill of [1, 2, 1]) {
      const plain = Buffer.alloc(20, fill);
      expect(server.sealRecvFrame(t, plain).equals(encodePacket(server.sealRecv({ ...p, payload: plain }), 5))).toBe(true);
    }
  });

  it('are the frame and sign prefix the generic encoder gives, for ASCII and other fields and edge values', () => {
    const reference = (p: RecvPacket, n: number, version: number): { frame: Buffer; prefix: Buffer } => {
      const payloadBytes = 4 * Math.ceil((16 * (Math.floor(n / 16) + 1)) / 3);
      const frame = encodePacket({ ...p, msgKey: '0'.repeat(32), payload: Buffer.alloc(payloadBytes) }, version);
      const prefix = `${p.messageId}${p.messageSeq}${p.clientMsgNo}${p.timestamp}${p.fromUid}${p.channelId}${p.channelType}`;
      return { frame, prefix: Buffer.from(prefix, 'utf8') };
    };
    const cases: Partial<RecvPacket>[] = [
      { fromUid: 'a', channelId: '', clientMsgNo: '' },
      { fromUid: 'u'.repeat(200), channelId: 'c'.repeat(20_000), clientMsgNo: 'm'.repeat(127) },
      { fromUid: 'u1', messageId: -(1n << 63n), messageSeq: 0n, timestamp: -(2 ** 31), channelType: 255, expire: 2 ** 32 - 1 },
      { fromUid: 'u1', messageId: (1n << 63n) - 1n, messageSeq: 2n ** 32n - 1n, timestamp: 2 ** 31 - 1, channelType: 0 },
      { fromUid: 'u1', clientMsgNo: 'x\u007f', setting: 0xff & ~Setting.TOPIC, redDot: true, syncOnce: true },
      { fromUid: 'ü', clientMsgNo: 'm' },
      { fromUid: 'u1', clientMsgNo: 'é' },
      { fromUid: 'u1', channelId: '群' },
    ];
    for (let version = 1; version <= 6; version++) {
      for (const [i, extra] of cases.entries()) {
        for (const n of [0, 15, 16, 3000]) {
          const p = base('g1', extra);
          const t = recvTemplate(p, n, version);
          const want = reference(p, n, version);
          expect(t.frame.equals(want.frame), `v${version} case${i} n${n}`).toBe(true);
          expect(t.signPrefixBytes.equals(want.prefix), `v${version} case${i} n${n}`).toBe(true);
          expect(t.frame.subarray(t.msgKeyAt, t.msgKeyAt + 32).equals(Buffer.alloc(32, '0'))).toBe(true);
        }
      }
    }
    // A 64-bit sequence only fits from version 6 on.
    const big = base('g1', { fromUid: 'u1', messageSeq: 2n ** 64n - 1n });
    expect(recvTemplate(big, 10, 6).frame.equals(reference(big, 10, 6).frame)).toBe(true);
    expect(recvTemplate(big, 10, 6).signPrefixBytes.toString()).toMatch(/^1957234823423213568184467440737095516/);
  });

  it("refuse what the wire cannot carry with the encoder's own error, whichever writer the shape takes", () => {
    const bad: Partial<RecvPacket>[] = [
      { fromUid: 'u1', messageSeq: 2n ** 32n },
      { fromUid: 'u1', messageSeq: -1n },
      { fromUid: 'u1', messageId: 1n << 63n },
      { fromUid: 'u1', timestamp: 2 ** 31 },
      { fromUid: 'u1', timestamp: 1.5 },
      { fromUid: 'u1', channelType: 256 },
      { fromUid: 'u1', setting: -1 },
      { fromUid: 'u1', expire: -1 },
      { fromUid: 'u1', clientMsgNo: 'm'.repeat(32_768) },
    ];
    for (const [i, extra] of bad.entries()) {
      const p = base('g1', extra);
      const message = (() => {
        try {
          encodePacket({ ...p, msgKey: '0'.repeat(32), payload: Buffer.alloc(24) }, 5);
        } catch (e) {
          return (e as Error).message;
        }
        return 'no error';
      })();
      expect(message, `case ${i}`).not.toBe('no error');
      expect(() => recvTemplate(p, 10, 5), `case ${i}`).toThrow(message);
    }
    expect(() => recvTemplate(base('g1', { fromUid: 'u1' }), 10, 7)).toThrow(/protocol version 7/);
    expect(() => recvTemplate(base('g1', { fromUid: 'u1' }), 1_000_000, 5)).toThrow(/exceeds 1048576/);
  });

  it('refuses a plaintext of another length than the template was built for', () => {
    const t = recvTemplate(base('g', {}), 20, 5);
    expect(() => server.sealRecvFrame(t, Buffer.alloc(40))).toThrow(/template/);
  });
});

describe('native session crypto (@parley/wkcrypto)', () => {
  // CI must test the native path it ships; elsewhere a machine without a compiler still runs the rest.
  const available = wkcryptoImplementation.name === 'native';
  it('is in use (required when CI is set)', () => {
    if (process.env.CI === 'true') expect(wkcryptoImplementation, wkcryptoImplementation.reason).toMatchObject({ name: 'native' });
    expect(['native', 'js']).toContain(wkcryptoImplementation.name);
  });

  const pair = (i: number): [WkSessionCrypto, WkSessionCrypto] => {
    const key = `k${String(i).padStart(15, '0')}`;
    const iv = `iv${String(i).padStart(14, '0')}`;
    return [new WkSessionCrypto(key, iv, 'native'), new WkSessionCrypto(key, iv, 'js')];
  };
  const recv = (channelId: string, fromUid: string, i: number): RecvPacket => ({
    type: PacketType.RECV,
    setting: 0,
    msgKey: '',
    fromUid,
    channelId,
    channelType: 2,
    clientMsgNo: `cmn-${i}`,
    messageId: 1957234823423213568n + BigInt(i),
    messageSeq: BigInt(i + 1),
    timestamp: 1785398400,
    payload: Buffer.alloc(0),
  });

  it.runIf(available)('seals the same RECV frames as the JavaScript path, sessions interleaved, across the stack/heap boundary', () => {
    const sessions = [pair(1), pair(2), pair(3)];
    const lengths = [0, 1, 15, 16, 17, 64, 1000, 3000, 3100, 4095, 4096, 10_000, 70_000];
    for (const [k, n] of lengths.entries()) {
      const plain = Buffer.from(Array.from({ length: n }, (_, j) => (j * 31 + n) & 0xff));
      for (const [i, p] of [recv('g1', 'u1', k), recv('群-1', 'ünï', k), recv('x'.repeat(3000), 'u'.repeat(2000), k)].entries()) {
        for (const version of [3, 5, 6]) {
          const t = recvTemplate(p, n, version);
          for (const [native, js] of [...sessions, ...sessions.slice().reverse()]) {
            const a = native.sealRecvFrame(t, plain);
            const b = js.sealRecvFrame(t, plain);
            expect(a.equals(b), `n${n} packet${i} v${version}`).toBe(true);
            expect(js.openRecv(decodePacket(a, version) as RecvPacket).equals(plain)).toBe(true);
          }
        }
      }
    }
  });

  it.runIf(available)('seals the same SEND frames as the JavaScript path and the encoder, every shape, sessions interleaved', () => {
    const sessions = [pair(4), pair(5)];
    const sends: [string, SendPacket][] = [];
    for (const n of [0, 1, 15, 16, 17, 64, 3000, 4096, 70_000]) {
      const payload = Buffer.from(Array.from({ length: n }, (_, j) => (j * 13 + n) & 0xff));
      const base: SendPacket = {
        type: PacketType.SEND,
        setting: 0,
        clientSeq: 4_000_000_000 + n,
        clientMsgNo: `m-${n}`,
        channelId: 'u2',
        channelType: 1,
        msgKey: '',
        payload,
      };
      sends.push([`n${n}`, base]);
      sends.push([`n${n} utf8`, { ...base, channelId: '群聊-ü'.repeat(3), clientMsgNo: 'ï'.repeat(40), expire: 3600 }]);
      sends.push([`n${n} topic`, { ...base, setting: Setting.TOPIC, topic: '话题/ü', redDot: false, syncOnce: true, noPersist: true }]);
      sends.push([`n${n} stream`, { ...base, setting: Setting.STREAM | Setting.TOPIC, streamNo: 's-1', topic: 't' }]);
      sends.push([`n${n} long`, { ...base, channelId: 'c'.repeat(4000) }]);
    }
    for (const [what, p] of sends) {
      for (const version of [2, 3, 4, 5, 6]) {
        for (const [native, js] of [...sessions, ...sessions.slice().reverse()]) {
          const frame = native.sealSendFrame(p, version)!;
          expect(frame, `${what} v${version}`).toBeInstanceOf(Buffer);
          expect(frame.equals(encodePacket(js.sealSend(p), version)), `${what} v${version}`).toBe(true);
          // The peer opens it: the msg_key verifies over the frame as read.
          expect(js.openSend(decodePacket(frame, version) as SendPacket).equals(p.payload), `${what} v${version}`).toBe(true);
        }
      }
    }
    // Unencrypted sends and the JavaScript path are left to sealSend.
    const [native, js] = pair(6);
    expect(native.sealSendFrame({ ...sends[0]![1], setting: Setting.NO_ENCRYPT }, 5)).toBeUndefined();
    expect(js.sealSendFrame(sends[0]![1], 5)).toBeUndefined();
    // A field the encoder refuses is refused here too, before anything is sealed.
    expect(() => native.sealSendFrame({ ...sends[0]![1], channelId: 'c'.repeat(70_000) }, 5)).toThrow(/channelId/);
  });

  it.runIf(available)('opens what the JavaScript path opens, and refuses what it refuses with the same error', () => {
    const [native, js] = pair(7);
    const [client] = pair(7);
    for (const n of [0, 5, 16, 64, 3000, 5000, 70_000]) {
      const plain = Buffer.from(Array.from({ length: n }, (_, j) => (j * 7 + n) & 0xff));
      for (const channelId of ['g1', '群聊-1', 'c'.repeat(4000)]) {
        const send: SendPacket = {
          type: PacketType.SEND,
          setting: 0,
          clientSeq: n + 1,
          clientMsgNo: `m-${n}`,
          channelId,
          channelType: 2,
          msgKey: '',
          payload: plain,
        };
        const sealed = client.sealSend(send);
        expect(native.openSend(sealed).equals(plain), `n${n} ${channelId.slice(0, 8)}`).toBe(true);
        expect(js.openSend(sealed).equals(plain)).toBe(true);
        const cases: [string, SendPacket][] = [
          ['wrong seq', { ...sealed, clientSeq: sealed.clientSeq + 1 }],
          ['key upper case', { ...sealed, msgKey: sealed.msgKey.toUpperCase() }],
          ['key too long', { ...sealed, msgKey: `${sealed.msgKey}0` }],
          ['key non-ASCII', { ...sealed, msgKey: `${sealed.msgKey.slice(0, 31)}é` }],
          ['key empty', { ...sealed, msgKey: '' }],
        ];
        for (const [what, p] of cases) {
          expect(
            cryptoCode(() => native.openSend(p)),
            what,
          ).toBe(cryptoCode(() => js.openSend(p)));
          expect(
            cryptoCode(() => native.openSend(p)),
            what,
          ).toBe('MSG_KEY_MISMATCH');
        }
      }
    }
    // Signed correctly but not a valid ciphertext: bad padding, not whole blocks, lenient Base64 (no padding, a line break).
    const forge = (wire: string): SendPacket => {
      const p: SendPacket = {
        type: PacketType.SEND,
        setting: 0,
        clientSeq: 1,
        clientMsgNo: 'm',
        channelId: 'g1',
        channelType: 2,
        msgKey: '',
        payload: Buffer.from(wire, 'latin1'),
      };
      return { ...p, msgKey: client.sendMsgKey(p) };
    };
    const raw = createCipheriv('aes-128-cbc', Buffer.from('k000000000000007'), Buffer.from('iv00000000000007')).setAutoPadding(false);
    const badPad = Buffer.concat([raw.update(Buffer.alloc(32, 0x41)), raw.final()]).toString('base64');
    const good = client.encrypt(Buffer.from('hello lenient')).toString('latin1');
    for (const [what, wire, want] of [
      ['bad padding', badPad, 'DECRYPT_FAILED'],
      ['not whole blocks', Buffer.alloc(20, 1).toString('base64'), 'DECRYPT_FAILED'],
      ['empty', '', 'DECRYPT_FAILED'],
      ['unpadded', good.replace(/=+$/, ''), 'no error'],
      ['line break', `${good.slice(0, 8)}\n${good.slice(8)}`, 'no error'],
    ] as const) {
      expect(
        cryptoCode(() => native.openSend(forge(wire))),
        what,
      ).toBe(want);
      expect(
        cryptoCode(() => js.openSend(forge(wire))),
        what,
      ).toBe(want);
    }
    expect(native.openSend(forge(good.replace(/=+$/, ''))).toString()).toBe('hello lenient');
  });

  it.runIf(available)('refuses what is not a session and a template that does not fit the plaintext', async () => {
    const { createRequire } = await import('node:module');
    const wk = (createRequire(import.meta.url)('@parley/wkcrypto') as typeof import('@parley/wkcrypto')).native!;
    const s = wk.session(Buffer.alloc(16, 1), Buffer.alloc(16, 2));
    const t = recvTemplate(recv('g1', 'u1', 1), 10, 5);
    const plain = Buffer.alloc(10, 3);
    const out = Buffer.alloc(t.frame.length);
    // The packed input sealRecvFrame makes: msgKeyAt, payloadAt, the prefix's and plaintext's lengths, then the bytes.
    const pack = (keyAt: number, payloadAt: number, prefix: Buffer, p: Buffer): Buffer => {
      const head = Buffer.alloc(16);
      [keyAt, payloadAt, prefix.length, p.length].forEach((v, i) => head.writeUInt32LE(v, 4 * i));
      return Buffer.concat([head, t.frame.subarray(0, payloadAt), prefix, p]);
    };
    const packed = pack(t.msgKeyAt, t.payloadAt, t.signPrefixBytes, plain);
    for (const impostor of [{}, Object.create(null), Buffer.alloc(16)]) {
      expect(() => wk.sealRecv(impostor as typeof s, packed, out)).toThrow(/sealRecv\(session/);
    }
    expect(() => wk.sealRecv(s, new Uint16Array(8) as unknown as Uint8Array, out)).toThrow(/sealRecv\(session/);
    // Lengths that do not add up to the input, a msg_key past the payload, an out of the wrong size, a short head.
    const misfits: [Buffer, Buffer][] = [
      [pack(t.msgKeyAt, t.payloadAt, t.signPrefixBytes, Buffer.alloc(40)), out],
      [Buffer.concat([packed, Buffer.alloc(1)]), out],
      [packed.subarray(0, packed.length - 1), out],
      [pack(t.payloadAt - 31, t.payloadAt, t.signPrefixBytes, plain), out],
      [packed, Buffer.alloc(out.length + 1)],
      [packed, Buffer.alloc(out.length - 1)],
      [packed.subarray(0, 15), out],
      [Buffer.from(packed).fill(0xff, 0, 4), out],
      [Buffer.from(packed).fill(0xff, 8, 12), out],
    ];
    for (const [input, o] of misfits) expect(() => wk.sealRecv(s, input, o)).toThrow(/does not fit/);
    // out inside the input.
    const shared = Buffer.alloc(packed.length + out.length);
    packed.copy(shared);
    expect(() =>
      wk.sealRecv(s, shared.subarray(0, packed.length), shared.subarray(packed.length - 1, packed.length - 1 + out.length)),
    ).toThrow(/overlaps/);
    wk.sealRecv(s, packed, out);
    expect(out.subarray(0, t.msgKeyAt).equals(t.frame.subarray(0, t.msgKeyAt))).toBe(true);
    wk.sealRecv(s, shared.subarray(0, packed.length), shared.subarray(packed.length));
    expect(out.subarray(0, t.msgKeyAt).equals(shared.subarray(packed.length, packed.length + t.msgKeyAt))).toBe(true);
  });

  it.runIf(available)('openRecv refuses fields that lie outside the frame, and what is not an Int32Array of them', async () => {
    const { createRequire } = await import('node:module');
    const wk = (createRequire(import.meta.url)('@parley/wkcrypto') as typeof import('@parley/wkcrypto')).native!;
    const s = wk.session(Buffer.alloc(16, 1), Buffer.alloc(16, 2));
    const frame = Buffer.alloc(100);
    const out = Buffer.alloc(100);
    // A layout that fits: id 0-8, seq 8-12, strings of 2 bytes each, msg_key 30-62, payload 62-100.
    const fits = (): Int32Array => Int32Array.from([0, 8, 4, 12, 2, 1_764_000_000, 14, 2, 16, 2, 2, 30, 62, 100]);
    expect(Object.keys(RECV_FIELDS)).toHaveLength(fits().length);
    // It fits: the msg_key does not verify (-1), nothing is thrown.
    expect(wk.openRecv(s, frame, fits(), out)).toBe(-1);
    const outside: Array<[keyof typeof RECV_FIELDS, number]> = [
      ['messageIdAt', 93],
      ['messageIdAt', -1],
      ['messageSeqLen', 5],
      ['messageSeqAt', 97],
      ['clientMsgNoLen', 200],
      ['clientMsgNoAt', -5],
      ['fromUidAt', 99],
      ['channelIdLen', -1],
      ['channelType', 256],
      ['msgKeyAt', 69],
      ['end', 101],
      ['payloadAt', 101],
    ];
    for (const [field, value] of outside) {
      const f = fits();
      f[RECV_FIELDS[field]] = value;
      expect(() => wk.openRecv(s, frame, f, out), `${field} ${value}`).toThrow(/outside the frame/);
    }
    // An output too short for the payload's plaintext (38 Base64 bytes: room for 27 is needed).
    expect(() => wk.openRecv(s, frame, fits(), Buffer.alloc(26))).toThrow(/outside the frame/);
    expect(() => wk.openRecv(s, frame, new Uint32Array(14) as unknown as Int32Array, out)).toThrow(/openRecv\(session/);
    expect(() => wk.openRecv(s, frame, new Int32Array(13), out)).toThrow(/openRecv\(session/);
  });

  it.runIf(available)('makes the server key pair and its secret in one native call, as the JavaScript path computes them', async () => {
    const { createRequire } = await import('node:module');
    const wk = (createRequire(import.meta.url)('@parley/wkcrypto') as typeof import('@parley/wkcrypto')).native!;
    const client = generateKeyPair();
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const out = Buffer.alloc(64);
      expect(wk.x25519Exchange(Buffer.from(client.publicKey, 'base64'), out)).toBe(0);
      const serverKey = out.toString('base64', 0, 32);
      seen.add(serverKey);
      expect(sharedSecret(client.privateKey, serverKey).equals(out.subarray(32))).toBe(true);
    }
    expect(seen.size).toBe(20);
    const pair = Buffer.alloc(64);
    wk.x25519KeyPair(pair);
    const mine = keyPairFromPrivate(pair.subarray(0, 32));
    expect(mine.publicKey).toBe(pair.toString('base64', 32));
    expect(() => wk.x25519KeyPair(Buffer.alloc(32))).toThrow(/x25519KeyPair/);
    expect(wk.x25519Exchange(Buffer.alloc(32), Buffer.alloc(64))).toBe(-1);
    // The refusal leaves nothing on OpenSSL's error queue of this thread, which Node's crypto shares:
    // a key import right after it (DER, which reads that queue) still succeeds.
    expect(keyPairFromPrivate(pair.subarray(0, 32)).publicKey).toBe(pair.toString('base64', 32));
    expect(() => wk.x25519Exchange(Buffer.alloc(31), Buffer.alloc(64))).toThrow(/x25519Exchange/);
    expect(() => wk.x25519Exchange(Buffer.alloc(32), Buffer.alloc(32))).toThrow(/x25519Exchange/);
  });

  it('refuses an unknown PARLEY_WKCRYPTO value and reports a missing build when native is required', async () => {
    const { execFileSync } = await import('node:child_process');
    const run = (value: string): string => {
      try {
        return execFileSync(
          process.execPath,
          [
            '--import',
            'tsx',
            '-e',
            `import(${JSON.stringify(new URL('./crypto.ts', import.meta.url).href)}).then((m) => console.log(m.wkcryptoImplementation.name))`,
          ],
          { env: { ...process.env, PARLEY_WKCRYPTO: value }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
        ).trim();
      } catch (e) {
        return String((e as { stderr?: string }).stderr);
      }
    };
    expect(run('js')).toBe('js');
    expect(run('fast')).toMatch(/PARLEY_WKCRYPTO must be 'native' or 'js', not 'fast'/);
    // Whether the module is built, not which path this process took (PARLEY_WKCRYPTO=js runs the suite on Node's).
    const { createRequire } = await import('node:module');
    const built = (createRequire(import.meta.url)('@parley/wkcrypto') as typeof import('@parley/wkcrypto')).native !== undefined;
    if (built) expect(run('native')).toBe('native');
    else expect(run('native')).toMatch(/PARLEY_WKCRYPTO=native, but/);
    // Three fresh Node processes compiling TypeScript: seconds each on a slow host.
  }, 60_000);
});
