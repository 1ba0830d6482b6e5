import { describe, expect, it } from 'vitest';
import { PacketType, Setting } from './constants.ts';
import {
  clientKeyExchange,
  deriveAesKey,
  generateKeyPair,
  keyPairFromPrivate,
  randomSalt,
  serverKeyExchange,
  sharedSecret,
  WkSessionCrypto,
} from './crypto.ts';
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

  it('leaves noEncrypt packets untouched', () => {
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
  });

  it('rejects keys and IVs that are not 16 ASCII characters', () => {
    expect(cryptoCode(() => new WkSessionCrypto('short', 'abcdefghijklmnop'))).toBe('BAD_SALT');
    expect(cryptoCode(() => new WkSessionCrypto('0c15fdbf4d09bc6c', 'abcdefghijklmnoé'))).toBe('BAD_SALT');
  });
});
