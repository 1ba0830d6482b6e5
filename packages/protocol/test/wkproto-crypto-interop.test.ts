/**
 * Cross-checks the node:crypto session crypto against the independent JS
 * libraries wukongimjssdk itself is built on (curve25519-js, crypto-js,
 * md5-typescript), used here directly the way realtime.md §2.6 describes the
 * client side: key = MD5hex(Base64(shared))[0:16], IV = salt, AES-CBC/PKCS#7
 * over UTF-8 text, ciphertext as Base64, msg_key = MD5hex(Base64(AES(sign))).
 */
import { randomBytes } from 'node:crypto';
import CryptoJS from 'crypto-js';
import { generateKeyPair as curveKeyPair, sharedKey } from 'curve25519-js';
import { Md5 } from 'md5-typescript';
import { describe, expect, it } from 'vitest';
import { PacketType } from '../src/wkproto/constants.ts';
import { clientKeyExchange, generateKeyPair, serverKeyExchange, type WkSessionCrypto } from '../src/wkproto/crypto.ts';
import type { RecvPacket, SendPacket } from '../src/wkproto/types.ts';

/** The JS-library side of one session. */
interface JsSide {
  key: string;
  iv: string;
}

const jsEncrypt = (side: JsSide, text: string): string =>
  CryptoJS.AES.encrypt(CryptoJS.enc.Utf8.parse(text), CryptoJS.enc.Utf8.parse(side.key), {
    iv: CryptoJS.enc.Utf8.parse(side.iv),
    mode: CryptoJS.mode.CBC,
    padding: CryptoJS.pad.Pkcs7,
  }).toString();

const jsDecrypt = (side: JsSide, base64: string): string =>
  CryptoJS.AES.decrypt(base64, CryptoJS.enc.Utf8.parse(side.key), {
    iv: CryptoJS.enc.Utf8.parse(side.iv),
    mode: CryptoJS.mode.CBC,
    padding: CryptoJS.pad.Pkcs7,
  }).toString(CryptoJS.enc.Utf8);

const jsMsgKey = (side: JsSide, sign: string): string => Md5.init(jsEncrypt(side, sign));

/** JS client + node:crypto server handshake. */
function handshakeJsClient(): { js: JsSide; node: WkSessionCrypto; salt: string } {
  const kp = curveKeyPair(randomBytes(32));
  const server = serverKeyExchange(Buffer.from(kp.public).toString('base64'));
  const shared = sharedKey(kp.private, Uint8Array.from(Buffer.from(server.serverKey, 'base64')));
  const key = Md5.init(Buffer.from(shared).toString('base64')).substring(0, 16);
  return { js: { key, iv: server.salt }, node: server.session, salt: server.salt };
}

describe('interop with curve25519-js / crypto-js / md5-typescript', () => {
  it('a JS client and the node server derive the same AES key and IV (20 random handshakes)', () => {
    for (let i = 0; i < 20; i++) {
      const { js, node } = handshakeJsClient();
      expect(node.aesKey).toBe(js.key);
      expect(node.aesIv).toBe(js.iv);
      expect(js.key).toMatch(/^[0-9a-f]{16}$/);
    }
  });

  it('a node client and a JS server derive the same key', () => {
    const client = generateKeyPair();
    const serverKp = curveKeyPair(randomBytes(32));
    const shared = sharedKey(serverKp.private, Uint8Array.from(Buffer.from(client.publicKey, 'base64')));
    const jsKey = Md5.init(Buffer.from(shared).toString('base64')).substring(0, 16);
    const mine = clientKeyExchange(client.privateKey, Buffer.from(serverKp.public).toString('base64'), 'ABCDEFGHabcdefgh');
    expect(mine.aesKey).toBe(jsKey);
  });

  it('payloads encrypted on one side decrypt on the other (ASCII, UTF-8, block-sized, empty)', () => {
    const { js, node } = handshakeJsClient();
    for (const text of ['{"type":1,"content":"hi"}', '你好, wörld 🎉', 'x'.repeat(16), 'y'.repeat(1000), '']) {
      const fromJs = jsEncrypt(js, text);
      expect(node.decrypt(Buffer.from(fromJs)).toString('utf8')).toBe(text);
      const fromNode = node.encrypt(Buffer.from(text, 'utf8')).toString('latin1');
      expect(fromNode).toBe(fromJs);
      expect(jsDecrypt(js, fromNode)).toBe(text);
    }
  });

  it('SEND msg_key: a JS-signed SEND verifies and decrypts on the server', () => {
    const { js, node } = handshakeJsClient();
    const text = '{"content":"héllo","type":1}';
    const payload = jsEncrypt(js, text);
    const send: SendPacket = {
      type: PacketType.SEND,
      setting: 0,
      clientSeq: 12,
      clientMsgNo: 'a1b2c3d43',
      channelId: 'bób',
      channelType: 1,
      msgKey: jsMsgKey(js, `12a1b2c3d43bób1${payload}`),
      payload: Buffer.from(payload),
    };
    expect(node.sendMsgKey(send)).toBe(send.msgKey);
    expect(node.openSend(send).toString('utf8')).toBe(text);
  });

  it('RECV msg_key: a server-sealed RECV verifies and decrypts with the JS libraries', () => {
    const { js, node } = handshakeJsClient();
    const text = '{"content":"ok","type":1}';
    const recv: RecvPacket = {
      type: PacketType.RECV,
      setting: 0,
      msgKey: '',
      fromUid: 'alice',
      channelId: 'alice',
      channelType: 1,
      clientMsgNo: 'cmn',
      messageId: 9_007_199_254_740_993n,
      messageSeq: 4_294_967_295n,
      timestamp: 1_785_398_400,
      payload: Buffer.from(text),
    };
    const sealed = node.sealRecv(recv);
    const wire = Buffer.from(sealed.payload).toString('latin1');
    const sign = `9007199254740993${'4294967295'}cmn1785398400alicealice1${wire}`;
    expect(sealed.msgKey).toBe(jsMsgKey(js, sign));
    expect(jsDecrypt(js, wire)).toBe(text);
  });
});
