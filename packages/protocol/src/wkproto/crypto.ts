/**
 * WKProto session crypto (realtime.md §2.6): X25519 key exchange at CONNECT,
 * then AES-128-CBC/PKCS#7 payloads carried as Base64 text, signed by msg_key.
 * The AES key and IV are 16 ASCII characters each, used as raw key/IV bytes.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  randomInt,
  type KeyObject,
} from 'node:crypto';
import { Setting } from './constants.ts';
import { WkprotoCryptoError } from './errors.ts';
import type { RecvPacket, SendPacket } from './types.ts';

/** Standard Base64 (with padding) of exactly 32 bytes: 43 symbols + '='. */
const BASE64_32 = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;
const ASCII_16 = /^[\x21-\x7e]{16}$/;
const SALT_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

/** A local X25519 key pair; `publicKey` is the Base64Std text sent on the wire. */
export interface WkKeyPair {
  privateKey: KeyObject;
  publicKey: string;
}

/** Creates a fresh X25519 key pair. */
export function generateKeyPair(): WkKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const x = publicKey.export({ format: 'jwk' }).x as string;
  return { privateKey, publicKey: Buffer.from(x, 'base64url').toString('base64') };
}

/** Builds a key pair from a raw 32-byte X25519 private scalar (deterministic tests, fixtures). */
export function keyPairFromPrivate(raw: Uint8Array): WkKeyPair {
  if (raw.length !== 32) throw new WkprotoCryptoError('BAD_PUBLIC_KEY', `private key must be 32 bytes, got ${raw.length}`);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_X25519_PREFIX, raw]), format: 'der', type: 'pkcs8' });
  const x = createPublicKey(privateKey).export({ format: 'jwk' }).x as string;
  return { privateKey, publicKey: Buffer.from(x, 'base64url').toString('base64') };
}

/**
 * X25519(privateKey, peer) where `peerPublicKey` must be Standard Base64 of
 * exactly 32 bytes; anything else (or a low-order point) ⇒ BAD_PUBLIC_KEY.
 */
export function sharedSecret(privateKey: KeyObject, peerPublicKey: string): Buffer {
  if (typeof peerPublicKey !== 'string' || !BASE64_32.test(peerPublicKey)) {
    throw new WkprotoCryptoError('BAD_PUBLIC_KEY', 'public key is not Base64 of exactly 32 bytes');
  }
  const x = Buffer.from(peerPublicKey, 'base64').toString('base64url');
  try {
    const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x }, format: 'jwk' });
    return diffieHellman({ privateKey, publicKey });
  } catch (e) {
    throw new WkprotoCryptoError('BAD_PUBLIC_KEY', `X25519 failed: ${(e as Error).message}`);
  }
}

/** AES key = first 16 characters of lower-case hex MD5(Base64Std(shared)). */
export function deriveAesKey(shared: Uint8Array): string {
  return createHash('md5').update(Buffer.from(shared).toString('base64'), 'latin1').digest('hex').slice(0, 16);
}

/** 16 random characters of [a-zA-Z0-9]: the CONNACK salt, whose ASCII bytes are the CBC IV. */
export function randomSalt(): string {
  let s = '';
  for (let i = 0; i < 16; i++) s += SALT_ALPHABET[randomInt(SALT_ALPHABET.length)];
  return s;
}

/** Fields a SEND msg_key signs. */
export type SendSignFields = Pick<SendPacket, 'clientSeq' | 'clientMsgNo' | 'channelId' | 'channelType' | 'payload'>;
/** Fields a RECV msg_key signs. */
export type RecvSignFields = Pick<
  RecvPacket,
  'messageId' | 'messageSeq' | 'clientMsgNo' | 'timestamp' | 'fromUid' | 'channelId' | 'channelType' | 'payload'
>;

/** The negotiated AES key/IV of one session, with payload and msg_key operations. */
export class WkSessionCrypto {
  private readonly key: Buffer;
  private readonly iv: Buffer;

  constructor(
    readonly aesKey: string,
    readonly aesIv: string,
  ) {
    if (!ASCII_16.test(aesKey)) throw new WkprotoCryptoError('BAD_SALT', 'AES key must be 16 printable ASCII characters');
    if (!ASCII_16.test(aesIv)) throw new WkprotoCryptoError('BAD_SALT', 'AES IV (salt) must be 16 printable ASCII characters');
    this.key = Buffer.from(aesKey, 'latin1');
    this.iv = Buffer.from(aesIv, 'latin1');
  }

  /** AES-CBC(plain) as ASCII Base64 bytes: the wire form of an encrypted payload. */
  encrypt(plain: Uint8Array): Buffer {
    const c = createCipheriv('aes-128-cbc', this.key, this.iv);
    return Buffer.from(Buffer.concat([c.update(plain), c.final()]).toString('base64'), 'latin1');
  }

  /** Inverse of {@link encrypt}; throws DECRYPT_FAILED on bad Base64 or padding. */
  decrypt(wire: Uint8Array): Buffer {
    const raw = Buffer.from(Buffer.from(wire).toString('latin1'), 'base64');
    if (raw.length === 0 || raw.length % 16 !== 0) {
      throw new WkprotoCryptoError('DECRYPT_FAILED', `ciphertext of ${raw.length} bytes is not whole AES blocks`);
    }
    try {
      const d = createDecipheriv('aes-128-cbc', this.key, this.iv);
      return Buffer.concat([d.update(raw), d.final()]);
    } catch (e) {
      throw new WkprotoCryptoError('DECRYPT_FAILED', (e as Error).message);
    }
  }

  /** lower-hex MD5(Base64Std(AES-CBC(UTF-8 sign))) where sign = prefix + payload bytes. */
  private msgKey(prefix: string, payload: Uint8Array): string {
    const c = createCipheriv('aes-128-cbc', this.key, this.iv);
    const parts = [c.update(prefix, 'utf8'), c.update(payload), c.final()];
    return createHash('md5').update(Buffer.concat(parts).toString('base64'), 'latin1').digest('hex');
  }

  /** msg_key of a SEND over its wire payload. */
  sendMsgKey(p: SendSignFields): string {
    return this.msgKey(`${p.clientSeq}${p.clientMsgNo}${p.channelId}${p.channelType}`, p.payload);
  }

  /** msg_key of a RECV over its wire payload. */
  recvMsgKey(p: RecvSignFields): string {
    const prefix = `${p.messageId}${p.messageSeq}${p.clientMsgNo}${p.timestamp}${p.fromUid}${p.channelId}${p.channelType}`;
    return this.msgKey(prefix, p.payload);
  }

  /** Client side: encrypts `p.payload` (plaintext) and signs it, unless Setting.NO_ENCRYPT. */
  sealSend(p: SendPacket): SendPacket {
    if (p.setting & Setting.NO_ENCRYPT) return p;
    const sealed = { ...p, payload: this.encrypt(p.payload) };
    sealed.msgKey = this.sendMsgKey(sealed);
    return sealed;
  }

  /** Server side: verifies a SEND's msg_key and returns its plaintext payload (MSG_KEY_MISMATCH / DECRYPT_FAILED). */
  openSend(p: SendPacket): Buffer {
    if (p.setting & Setting.NO_ENCRYPT) return Buffer.from(p.payload.buffer, p.payload.byteOffset, p.payload.byteLength);
    if (this.sendMsgKey(p) !== p.msgKey) throw new WkprotoCryptoError('MSG_KEY_MISMATCH', 'SEND msg_key does not verify');
    return this.decrypt(p.payload);
  }

  /** Server side: encrypts `p.payload` (plaintext) and signs it, unless Setting.NO_ENCRYPT. */
  sealRecv(p: RecvPacket): RecvPacket {
    if (p.setting & Setting.NO_ENCRYPT) return p;
    const sealed = { ...p, payload: this.encrypt(p.payload) };
    sealed.msgKey = this.recvMsgKey(sealed);
    return sealed;
  }

  /** Client side: verifies a RECV's msg_key and returns its plaintext payload. */
  openRecv(p: RecvPacket): Buffer {
    if (p.setting & Setting.NO_ENCRYPT) return Buffer.from(p.payload.buffer, p.payload.byteOffset, p.payload.byteLength);
    if (this.recvMsgKey(p) !== p.msgKey) throw new WkprotoCryptoError('MSG_KEY_MISMATCH', 'RECV msg_key does not verify');
    return this.decrypt(p.payload);
  }
}

/** What the server puts in its CONNACK, plus the session crypto it keeps. */
export interface ServerKeyExchange {
  session: WkSessionCrypto;
  /** CONNACK server_key: Base64Std of the server's X25519 public key. */
  serverKey: string;
  /** CONNACK salt: the 16-character IV. */
  salt: string;
}

/** Server side of CONNECT: throws BAD_PUBLIC_KEY (⇒ CONNACK reason 2) for a bad client_key. */
export function serverKeyExchange(clientKey: string, keyPair: WkKeyPair = generateKeyPair()): ServerKeyExchange {
  const shared = sharedSecret(keyPair.privateKey, clientKey);
  const salt = randomSalt();
  return { session: new WkSessionCrypto(deriveAesKey(shared), salt), serverKey: keyPair.publicKey, salt };
}

/** Client side of CONNACK: IV = salt[0:16]. */
export function clientKeyExchange(privateKey: KeyObject, serverKey: string, salt: string): WkSessionCrypto {
  return new WkSessionCrypto(deriveAesKey(sharedSecret(privateKey, serverKey)), salt.slice(0, 16));
}
