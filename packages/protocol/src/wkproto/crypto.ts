/**
 * WKProto session crypto (realtime.md §2.6): X25519 key exchange at CONNECT,
 * then AES-128-CBC/PKCS#7 payloads carried as Base64 text, signed by msg_key.
 * The AES key and IV are 16 ASCII characters each, used as raw key/IV bytes.
 */
import { Buffer } from 'node:buffer';
import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  hash,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  randomInt,
  type Cipher,
  type Decipher,
  type KeyObject,
} from 'node:crypto';
import { loadOptionalNative } from '../optional-native.ts';
import type { NativeSession, WkcryptoNative } from '@parley/wkcrypto';
import { MAX_REMAINING_LENGTH, MAX_STRING_BYTES, PacketType, Setting } from './constants.ts';
import { I64_MAX, I64_MIN, putAsciiField, putInt64BE, putUint32BE, putUint32LE, U64_MAX } from './bytes.ts';
import { encodePacket, flagBits, hasStreamFields, seqSize, U32_MAX_BIG } from './encode.ts';
import { WkprotoCryptoError } from './errors.ts';
import { writeI32Decimal, writeI64Decimal, writeUDecimal, writeUintDecimal, type RecvView } from './recv-view.ts';
import type { RecvPacket, SendPacket } from './types.ts';
import { varintSize, writeVarint } from './varint.ts';

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

/**
 * X25519's base point (u = 9). A private key's Diffie-Hellman with it is that key's public key,
 * which is how the public half is read here: not with `export({ format: 'jwk' })`. On Node 20 a
 * JWK export holds the key's mutex while it allocates on V8's heap; when that allocation starts a
 * garbage collection that finalizes the key-generation job the key came from, the job's
 * destructor takes the same mutex and the thread waits on itself for ever (reproduced: a loop of
 * `generateKeyPairSync('x25519')` and a JWK export hangs within 5,000 rounds under
 * `--max-semi-space-size=1`). `diffieHellman` computes with the mutex held but allocates its
 * result after releasing it.
 */
const BASE_POINT = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: 'CQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, format: 'jwk' });

/** Base64Std of the raw 32-byte public key of an X25519 private key. */
function publicKeyOf(privateKey: KeyObject): string {
  return diffieHellman({ privateKey, publicKey: BASE_POINT }).toString('base64');
}

/**
 * Creates a fresh X25519 key pair: made by the native crypto when that is in use (both halves in
 * one call, then one JWK import: 98–135 µs against ~170 on a slow host), else by Node.
 */
export function generateKeyPair(): WkKeyPair {
  if (wkcrypto !== undefined) {
    const both = Buffer.alloc(64);
    wkcrypto.x25519KeyPair(both);
    const d = both.toString('base64url', 0, 32);
    const x = both.toString('base64url', 32, 64);
    const publicKey = both.toString('base64', 32, 64);
    both.fill(0);
    return { privateKey: createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d, x }, format: 'jwk' }), publicKey };
  }
  const { privateKey } = generateKeyPairSync('x25519');
  return { privateKey, publicKey: publicKeyOf(privateKey) };
}

/** Builds a key pair from a raw 32-byte X25519 private scalar (deterministic tests, fixtures). */
export function keyPairFromPrivate(raw: Uint8Array): WkKeyPair {
  if (raw.length !== 32) throw new WkprotoCryptoError('BAD_PUBLIC_KEY', `private key must be 32 bytes, got ${raw.length}`);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_X25519_PREFIX, raw]), format: 'der', type: 'pkcs8' });
  return { privateKey, publicKey: publicKeyOf(privateKey) };
}

/**
 * X25519(privateKey, peer) where `peerPublicKey` must be Standard Base64 of
 * exactly 32 bytes; anything else (or a low-order point) ⇒ BAD_PUBLIC_KEY.
 */
export function sharedSecret(privateKey: KeyObject, peerPublicKey: string): Buffer {
  const x = peerKeyBytes(peerPublicKey).toString('base64url');
  try {
    const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x }, format: 'jwk' });
    return diffieHellman({ privateKey, publicKey });
  } catch (e) {
    throw new WkprotoCryptoError('BAD_PUBLIC_KEY', `X25519 failed: ${(e as Error).message}`);
  }
}

/** The raw bytes of a peer's public key: Standard Base64 of exactly 32 bytes, else BAD_PUBLIC_KEY. */
function peerKeyBytes(peerPublicKey: string): Buffer {
  if (typeof peerPublicKey !== 'string' || !BASE64_32.test(peerPublicKey)) {
    throw new WkprotoCryptoError('BAD_PUBLIC_KEY', 'public key is not Base64 of exactly 32 bytes');
  }
  return Buffer.from(peerPublicKey, 'base64');
}

/** AES key = first 16 characters of lower-case hex MD5(Base64Std(shared)). */
export function deriveAesKey(shared: Uint8Array): string {
  return hash('md5', Buffer.from(shared).toString('base64'), 'hex').slice(0, 16);
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

/**
 * Which implementation does the per-message session crypto (the RECV seal, the
 * SEND open): `native` (@parley/wkcrypto, one call into C per operation, when
 * it was built) or `js` (this module's own path, which defines the bytes).
 * `PARLEY_WKCRYPTO=js` chooses the JavaScript path, `native` requires the
 * native one (an error at start-up when it is not built), unset takes native
 * when it is there.
 */
export type WkcryptoImplementation = 'native' | 'js';

const { native: wkcrypto, why: wkcryptoWhy } = loadOptionalNative<WkcryptoNative>(
  'PARLEY_WKCRYPTO',
  { on: 'native', off: 'js' },
  '@parley/wkcrypto',
);

/** The implementation in use and why (for start-up logs and tests). */
export const wkcryptoImplementation: { readonly name: WkcryptoImplementation; readonly reason: string } = {
  name: wkcrypto ? 'native' : 'js',
  reason: wkcryptoWhy,
};

/** AES block size, bytes. */
const BLOCK = 16;

/** The text a SEND's msg_key signs before its payload. */
function sendSignPrefix(p: Omit<SendSignFields, 'payload'>): string {
  return `${p.clientSeq}${p.clientMsgNo}${p.channelId}${p.channelType}`;
}

/** The text a RECV's msg_key signs before its payload. */
function recvSignPrefix(p: Omit<RecvSignFields, 'payload'>): string {
  return `${p.messageId}${p.messageSeq}${p.clientMsgNo}${p.timestamp}${p.fromUid}${p.channelId}${p.channelType}`;
}

/** Standard Base64 symbol → its 6 bits; 64 for '=', 255 for anything else. */
const BASE64_VALUE = new Uint8Array(256).fill(255);
for (let i = 0; i < 64; i++) BASE64_VALUE['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;
BASE64_VALUE[0x3d] = 64;

/**
 * `src[from, to)` copied to `dst` at `at`; returns `at + (to - from)`. A loop:
 * for the few dozen bytes of a RECV's fields it is cheaper than Buffer#copy,
 * which builds a typed array per call.
 */
function copyBytes(src: Uint8Array, from: number, to: number, dst: Uint8Array, at: number): number {
  for (let i = from; i < to; i++) dst[at++] = src[i]!;
  return at;
}

/**
 * Scratch for the blocks handed to a cipher (a plaintext and its padding, a
 * sign text, a ciphertext decoded from Base64), and its views by length: a
 * cipher's `update` copies its input and JavaScript runs one call at a time,
 * so one buffer serves every session. Lengths are whole blocks; `sealBlocks`
 * makes a fresh buffer for anything longer than the scratch.
 */
const SEAL_SCRATCH_BYTES = 4096;
const sealScratch = Buffer.allocUnsafeSlow(SEAL_SCRATCH_BYTES);
const sealViews: (Buffer | undefined)[] = [];

/** A buffer of exactly `bytes` (a multiple of BLOCK) to fill and encrypt: a view of the scratch when it fits. */
function sealBlocks(bytes: number): Buffer {
  if (bytes > SEAL_SCRATCH_BYTES) return Buffer.allocUnsafe(bytes);
  const k = bytes >> 4;
  return (sealViews[k] ??= sealScratch.subarray(0, bytes));
}

/**
 * Node's per-encoding Buffer methods, which `toString` and `write` call after
 * checking their arguments (present on Buffer.prototype since Node's early
 * days, though undocumented): the session crypto calls them straight,
 * skipping the encoding look-up and the argument checks it does not need.
 * Without them, the documented methods.
 */
const nodeBase64Slice = (Buffer.prototype as { base64Slice?: (this: Buffer, start: number, end: number) => string }).base64Slice;
const nodeLatin1Write = (Buffer.prototype as { latin1Write?: (this: Buffer, text: string, offset: number, length: number) => number })
  .latin1Write;
const nodeLatin1Slice = (Buffer.prototype as { latin1Slice?: (this: Uint8Array, start: number, end: number) => string }).latin1Slice;
const nodeBase64Write = (Buffer.prototype as { base64Write?: (this: Buffer, text: string, offset: number, length: number) => number })
  .base64Write;

/**
 * The bytes of `wire` read as Base64 the way `Buffer.from(text, 'base64')`
 * reads it (leniently: what it cannot read it skips): decoded into the
 * scratch when it fits (a view of it, valid until the next call), else into
 * a new buffer.
 */
function base64Decoded(wire: Uint8Array): Buffer {
  // Base64 decodes to at most 3 bytes per 4 symbols, and a partial group to at most 2 more.
  if (typeof nodeLatin1Slice === 'function' && typeof nodeBase64Write === 'function' && (wire.length >> 2) * 3 + 2 <= SEAL_SCRATCH_BYTES) {
    const n = nodeBase64Write.call(sealScratch, nodeLatin1Slice.call(wire, 0, wire.length), 0, SEAL_SCRATCH_BYTES);
    return n % BLOCK === 0 && n > 0 ? sealBlocks(n) : sealScratch.subarray(0, n);
  }
  return Buffer.from(Buffer.from(wire.buffer, wire.byteOffset, wire.byteLength).toString('latin1'), 'base64');
}

/** Base64 of `b[0, n)`. */
function base64Of(b: Buffer, n: number): string {
  return typeof nodeBase64Slice === 'function' ? nodeBase64Slice.call(b, 0, n) : b.toString('base64', 0, n);
}

/** Writes ASCII `text` into `b` at `at`. */
function writeAscii(b: Buffer, text: string, at: number): void {
  if (typeof nodeLatin1Write === 'function') nodeLatin1Write.call(b, text, at, text.length);
  else b.write(text, at, 'latin1');
}

/**
 * Strict Standard Base64 (padded, no whitespace) of `src[start, end)` decoded
 * into `out` from 0: the byte count, or -1 for anything else (whose meaning is
 * then left to the lenient reference decoder). For strict input both agree.
 */
function decodeBase64Strict(src: Buffer, start: number, end: number, out: Buffer): number {
  const n = end - start;
  if (n === 0 || n % 4 !== 0) return -1;
  let o = 0;
  const last = end - 4;
  for (let i = start; i < last; i += 4) {
    const a = BASE64_VALUE[src[i]!]!;
    const b = BASE64_VALUE[src[i + 1]!]!;
    const c = BASE64_VALUE[src[i + 2]!]!;
    const d = BASE64_VALUE[src[i + 3]!]!;
    if ((a | b | c | d) >= 64) return -1;
    out[o++] = (a << 2) | (b >> 4);
    out[o++] = ((b & 15) << 4) | (c >> 2);
    out[o++] = ((c & 3) << 6) | d;
  }
  const a = BASE64_VALUE[src[last]!]!;
  const b = BASE64_VALUE[src[last + 1]!]!;
  const c = BASE64_VALUE[src[last + 2]!]!;
  const d = BASE64_VALUE[src[last + 3]!]!;
  if (a >= 64 || b >= 64 || c > 64 || d > 64 || (c === 64 && d !== 64)) return -1;
  out[o++] = (a << 2) | (b >> 4);
  if (c === 64) return (b & 15) === 0 ? o : -1;
  out[o++] = ((b & 15) << 4) | (c >> 2);
  if (d === 64) return (c & 3) === 0 ? o : -1;
  out[o++] = ((c & 3) << 6) | d;
  return o;
}

/**
 * The negotiated AES key/IV of one session, with payload and msg_key operations.
 *
 * Node cannot reset a cipher to its IV, and building one per operation (key
 * schedule, OpenSSL context, JS wrapper) cost more than the AES itself. So each
 * session keeps ONE streaming AES-128-CBC cipher and ONE decipher without
 * padding, and remembers the last ciphertext block each has chained to. Since
 * CBC computes C1 = E(P1 ⊕ prev), starting a message at the session IV only
 * needs P1 ⊕= prev ⊕ IV before the update (encryption) or M1 ⊕= prev ⊕ IV after
 * it (decryption); every message is then one `update` call. PKCS#7 padding is
 * added and checked here. Not safe to share between concurrent users, which
 * JavaScript's single thread rules out.
 */
export class WkSessionCrypto {
  private readonly iv: Buffer;
  /**
   * The cipher and the decipher are made on first use (a session that sends or
   * receives nothing, such as an idle connection, holds neither): starting
   * either at the session IV is exactly what chaining from a `prev` equal to
   * the IV does.
   */
  private cipher: Cipher | undefined;
  private decipher: Decipher | undefined;
  /** The last ciphertext block the cipher produced (its CBC state); made with the cipher. */
  private encPrev: Buffer | undefined;
  /** The last ciphertext block the decipher consumed (its CBC state); made with the decipher. */
  private decPrev: Buffer | undefined;
  /**
   * Scratch of the RECV fast path (sign text, decoded ciphertext), made on first
   * use and grown on demand: a session that never takes that path (every
   * server session, an idle client) holds none.
   */
  private scratch: Buffer | undefined;
  /** Views of the scratch cut for the last sign text and ciphertext (reused while the length repeats). */
  private signView: Buffer | undefined;
  private rawView: Buffer | undefined;
  /** The native session (its own AES contexts), made on first use when the native crypto is in use. */
  private nativeSession: NativeSession | undefined;
  /** Where the native {@link openRecvView} decrypts (reused, grown on demand; {@link opened} points at it). */
  private nativeOpened: Buffer | undefined;
  /** The plaintext of the last {@link openRecvView}: `opened[0, length)`, until the next call. */
  opened: Buffer = Buffer.alloc(0);

  /** The native crypto this session uses (undefined: the JavaScript path). */
  private readonly wk: WkcryptoNative | undefined;

  /** `implementation` defaults to {@link wkcryptoImplementation}'s; 'native' throws when it is not built. */
  constructor(
    readonly aesKey: string,
    readonly aesIv: string,
    implementation: WkcryptoImplementation = wkcryptoImplementation.name,
  ) {
    if (implementation === 'native' && wkcrypto === undefined) throw new Error(`native WKProto crypto unavailable: ${wkcryptoWhy}`);
    this.wk = implementation === 'native' ? wkcrypto : undefined;
    if (!ASCII_16.test(aesKey)) throw new WkprotoCryptoError('BAD_SALT', 'AES key must be 16 printable ASCII characters');
    if (!ASCII_16.test(aesIv)) throw new WkprotoCryptoError('BAD_SALT', 'AES IV (salt) must be 16 printable ASCII characters');
    this.iv = Buffer.from(aesIv, 'latin1');
  }

  private startCipher(): Cipher {
    this.encPrev = Buffer.from(this.iv);
    return (this.cipher = createCipheriv('aes-128-cbc', Buffer.from(this.aesKey, 'latin1'), this.iv).setAutoPadding(false));
  }

  private startDecipher(): Decipher {
    this.decPrev = Buffer.from(this.iv);
    return (this.decipher = createDecipheriv('aes-128-cbc', Buffer.from(this.aesKey, 'latin1'), this.iv).setAutoPadding(false));
  }

  /** AES-128-CBC/PKCS#7 with the session IV of `prefix` (text as UTF-8, or bytes) followed by `data`: raw ciphertext. */
  private cbcEncrypt(prefix: string | Uint8Array, data: Uint8Array): Buffer {
    const text = typeof prefix === 'string';
    const prefixBytes = text ? (prefix === '' ? 0 : Buffer.byteLength(prefix, 'utf8')) : prefix.length;
    const n = prefixBytes + data.length;
    const pad = BLOCK - (n % BLOCK);
    const block = sealBlocks(n + pad);
    if (text) {
      if (prefixBytes > 0) block.write(prefix, 0, 'utf8');
    } else block.set(prefix, 0);
    block.set(data, prefixBytes);
    for (let i = n; i < n + pad; i++) block[i] = pad;
    return this.cbcBlocks(block, n + pad);
  }

  /**
   * AES-128-CBC with the session IV of `block`, already padded to whole
   * blocks (changed in place; `bytes` is its length): raw ciphertext. The
   * cipher's chaining block is kept by copying the last one out byte by byte:
   * `update`'s output is made in C++, and each Buffer method called on it
   * (`copy` cuts a view) costs more than the 16 bytes.
   */
  private cbcBlocks(block: Buffer, bytes: number = block.length): Buffer {
    const cipher = this.cipher ?? this.startCipher();
    const prev = this.encPrev!;
    const iv = this.iv;
    for (let i = 0; i < BLOCK; i++) block[i]! ^= prev[i]! ^ iv[i]!;
    const out = cipher.update(block);
    copyBytes(out, bytes - BLOCK, bytes, prev, 0);
    return out;
  }

  /** AES-CBC(plain) as ASCII Base64 bytes: the wire form of an encrypted payload. */
  encrypt(plain: Uint8Array): Buffer {
    const ct = this.cbcEncrypt('', plain);
    return Buffer.from(base64Of(ct, ct.length), 'latin1');
  }

  /** Inverse of {@link encrypt}; throws DECRYPT_FAILED on bad Base64 or padding. */
  decrypt(wire: Uint8Array): Buffer {
    const raw = base64Decoded(wire);
    if (raw.length === 0 || raw.length % BLOCK !== 0) {
      throw new WkprotoCryptoError('DECRYPT_FAILED', `ciphertext of ${raw.length} bytes is not whole AES blocks`);
    }
    const plain = this.cbcDecrypt(raw);
    if (!plain) throw new WkprotoCryptoError('DECRYPT_FAILED', 'bad decrypt (PKCS#7 padding)');
    return plain;
  }

  /**
   * AES-128-CBC decryption with the session IV of `raw` (whole blocks, not
   * empty) and its PKCS#7 padding removed; undefined when the padding is bad.
   */
  private cbcDecrypt(raw: Uint8Array): Buffer | undefined {
    const n = this.cbcDecryptOpened(raw);
    return n < 0 ? undefined : this.opened.subarray(0, n);
  }

  /** {@link cbcDecrypt} into {@link opened}: the plaintext's length, or -1 when the padding is bad. */
  private cbcDecryptOpened(raw: Uint8Array): number {
    const out = (this.decipher ?? this.startDecipher()).update(raw);
    const prev = this.decPrev!;
    const iv = this.iv;
    for (let i = 0; i < BLOCK; i++) out[i]! ^= prev[i]! ^ iv[i]!;
    copyBytes(raw, raw.length - BLOCK, raw.length, prev, 0);
    this.opened = out;
    const pad = out[out.length - 1]!;
    if (pad === 0 || pad > BLOCK) return -1;
    for (let i = out.length - pad; i < out.length; i++) if (out[i] !== pad) return -1;
    return out.length - pad;
  }

  /** lower-hex MD5(Base64Std(AES-CBC(sign))) where sign = prefix (text as UTF-8, or bytes) + payload bytes. */
  private msgKey(prefix: string | Uint8Array, payload: Uint8Array): string {
    const ct = this.cbcEncrypt(prefix, payload);
    return hash('md5', base64Of(ct, ct.length), 'hex');
  }

  /** msg_key of a SEND over its wire payload. */
  sendMsgKey(p: SendSignFields): string {
    return this.msgKey(sendSignPrefix(p), p.payload);
  }

  /** msg_key of a RECV over its wire payload. */
  recvMsgKey(p: RecvSignFields): string {
    return this.msgKey(recvSignPrefix(p), p.payload);
  }

  /** Client side: encrypts `p.payload` (plaintext) and signs it, unless Setting.NO_ENCRYPT. */
  sealSend(p: SendPacket): SendPacket {
    if (p.setting & Setting.NO_ENCRYPT) return p;
    const sealed = { ...p, payload: this.encrypt(p.payload) };
    sealed.msgKey = this.sendMsgKey(sealed);
    return sealed;
  }

  /**
   * Client side: the complete SEND frame of `p` (its payload the plaintext) at
   * `version`, byte for byte `encodePacket(sealSend(p), version)`, encrypted
   * and signed by the native crypto in one call (@parley/wkcrypto's
   * `sealRecv` writes any frame whose msg_key signs a prefix and the
   * payload). Undefined when this session uses the JavaScript path or `p`
   * is not encrypted (Setting.NO_ENCRYPT): the caller seals with
   * {@link sealSend}.
   */
  sealSendFrame(p: SendPacket, version: number): Buffer | undefined {
    const wk = this.wk;
    if (wk === undefined || (p.setting & Setting.NO_ENCRYPT) !== 0) return undefined;
    const plain = p.payload;
    const sealedBytes = sealedPayloadBytes(plain.length);
    // The frame with placeholders: the encoder checks every field and writes the length; the native seal fills in the rest.
    const frame = encodePacket({ ...p, msgKey: MSG_KEY_PLACEHOLDER, payload: zeroBytes(sealedBytes) }, version);
    const payloadAt = frame.length - sealedBytes;
    // After the msg_key come the topic (with Setting.TOPIC) and the payload.
    const topicBytes = (p.setting & Setting.TOPIC) !== 0 ? 2 + Buffer.byteLength(p.topic ?? '', 'utf8') : 0;
    const prefix = sendSignPrefix(p);
    const prefixBytes = Buffer.byteLength(prefix, 'utf8');
    const packedBytes = SEAL_INPUT_HEAD + payloadAt + prefixBytes + plain.length;
    const scratch = sendSealInput(packedBytes);
    writeSealInput(scratch, payloadAt - topicBytes - MSG_KEY_CHARS, frame, payloadAt, prefix, prefixBytes, plain);
    wk.sealRecv(this.native(wk), scratch.subarray(0, packedBytes), frame);
    return frame;
  }

  /**
   * Server side: verifies a SEND's msg_key and returns its plaintext payload
   * (MSG_KEY_MISMATCH / DECRYPT_FAILED) in a buffer of its own, never a view
   * of `p.payload` (an unencrypted payload is copied), so the SEND may have been
   * decoded from a read buffer that is reused.
   */
  openSend(p: SendPacket): Buffer {
    if (p.setting & Setting.NO_ENCRYPT) return Buffer.from(p.payload);
    const wk = this.wk;
    if (wk !== undefined) {
      const wire = p.payload;
      const out = Buffer.allocUnsafe((wire.length >> 2) * 3);
      const n = wk.openSend(this.native(wk), sendSignPrefix(p), wire, p.msgKey, out);
      if (n >= 0) return out.subarray(0, n);
      if (n === -1) throw new WkprotoCryptoError('MSG_KEY_MISMATCH', 'SEND msg_key does not verify');
      if (n === -3) throw new WkprotoCryptoError('DECRYPT_FAILED', 'bad decrypt (PKCS#7 padding)');
      // Not strict Base64: the lenient reference decoder decides (the msg_key has verified).
      return this.decrypt(wire);
    }
    if (this.sendMsgKey(p) !== p.msgKey) throw new WkprotoCryptoError('MSG_KEY_MISMATCH', 'SEND msg_key does not verify');
    return this.decrypt(p.payload);
  }

  /**
   * The native session for @parley/wkcrypto's many-reads open (recv-batch.ts),
   * undefined when this session uses the JavaScript path or the built module
   * predates that call.
   */
  get batchSession(): { wk: WkcryptoNative; session: NativeSession } | undefined {
    const wk = this.wk;
    if (wk === undefined || typeof wk.openRecvReads !== 'function') return undefined;
    return { wk, session: this.native(wk) };
  }

  private native(wk: WkcryptoNative): NativeSession {
    return (this.nativeSession ??= wk.session(Buffer.from(this.aesKey, 'latin1'), this.iv));
  }

  /** Server side: encrypts `p.payload` (plaintext) and signs it, unless Setting.NO_ENCRYPT. */
  sealRecv(p: RecvPacket): RecvPacket {
    if (p.setting & Setting.NO_ENCRYPT) return p;
    const sealed = { ...p, payload: this.encrypt(p.payload) };
    sealed.msgKey = this.recvMsgKey(sealed);
    return sealed;
  }

  /**
   * Server side: the complete RECV frame of {@link RecvTemplate} for this
   * session, byte for byte `encodePacket(sealRecv(packet), version)`: a copy of
   * the template with the encrypted payload (Base64) and its msg_key written in.
   */
  sealRecvFrame(t: RecvTemplate, plain: Uint8Array): Buffer {
    const template = t.frame;
    const payloadAt = t.payloadAt;
    const frameBytes = template.length;
    const sealedBytes = sealedPayloadBytes(plain.length);
    if (sealedBytes !== frameBytes - payloadAt) {
      throw new Error(`RECV template holds ${frameBytes - payloadAt} payload bytes, sealed ${sealedBytes}`);
    }
    const wk = this.wk;
    if (wk !== undefined) {
      // One packed input per template and plaintext, made at its first seal (a group's recipients share it).
      let packed = t.sealInput;
      if (packed === undefined || t.sealPlain !== plain) {
        packed = t.sealInput = packRecvTemplate(t, plain);
        t.sealPlain = plain;
      }
      const out = Buffer.allocUnsafe(frameBytes);
      wk.sealRecv(this.native(wk), packed, out);
      return out;
    }
    const ct = this.cbcEncrypt('', plain);
    const sealed = base64Of(ct, ct.length);
    const frame = Buffer.allocUnsafe(frameBytes);
    frame.set(template, 0);
    writeAscii(frame, sealed, payloadAt);
    // The msg_key signs the template's prefix bytes (encoded once per template) and the sealed payload.
    writeAscii(frame, this.msgKey(t.signPrefixBytes, frame.subarray(payloadAt)), t.msgKeyAt);
    return frame;
  }

  /** The scratch buffer, at least `bytes` long. */
  private scratchOf(bytes: number): Buffer {
    const s = this.scratch;
    if (s !== undefined && s.length >= bytes) return s;
    this.signView = this.rawView = undefined;
    return (this.scratch = Buffer.allocUnsafe(Math.max(bytes, 1024, 2 * (s?.length ?? 0))));
  }

  /**
   * The msg_key check of {@link openRecv} for a RECV read in place by
   * `scanRecv`: true when `v`'s msg_key is the one {@link recvMsgKey} gives
   * for its fields. The sign text is written straight from the frame's bytes
   * into a reused buffer (decimal numbers without BigInt), not built as a string.
   */
  verifyRecvView(v: RecvView): boolean {
    if (v.msgKeyLen !== MSG_KEY_CHARS) return false;
    const b = v.buf;
    let p = this.recvSignPrefixOf(v, v.end - v.payloadAt + BLOCK);
    const s = this.scratch!;
    p = copyBytes(b, v.payloadAt, v.end, s, p);
    const pad = BLOCK - (p % BLOCK);
    for (let i = p; i < p + pad; i++) s[i] = pad;
    let block = this.signView;
    if (block === undefined || block.length !== p + pad) block = this.signView = s.subarray(0, p + pad);
    const key = hash('md5', base64Of(this.cbcBlocks(block), block.length), 'hex');
    const at = v.msgKeyAt;
    for (let i = 0; i < MSG_KEY_CHARS; i++) if (key.charCodeAt(i) !== b[at + i]) return false;
    return true;
  }

  /**
   * Writes the sign text's prefix of the RECV `v` (the fields before its
   * payload, from the frame's bytes: decimal numbers without BigInt) at the
   * scratch's start, leaving `room` bytes after it: its length.
   */
  private recvSignPrefixOf(v: RecvView, room: number): number {
    const b = v.buf;
    // Decimal digits: id ≤ 20, seq ≤ 20, timestamp ≤ 11, channel type ≤ 3.
    const s = this.scratchOf(54 + v.clientMsgNoLen + v.fromUidLen + v.channelIdLen + room);
    let p = writeI64Decimal(s, 0, b, v.messageIdAt);
    p = writeUDecimal(s, p, b, v.messageSeqAt, v.messageSeqLen);
    p = copyBytes(b, v.clientMsgNoAt, v.clientMsgNoAt + v.clientMsgNoLen, s, p);
    p = writeI32Decimal(s, p, v.timestamp);
    p = copyBytes(b, v.fromUidAt, v.fromUidAt + v.fromUidLen, s, p);
    p = copyBytes(b, v.channelIdAt, v.channelIdAt + v.channelIdLen, s, p);
    return writeUintDecimal(s, p, v.channelType);
  }

  /**
   * The decryption of {@link openRecv} for a RECV read in place: its
   * plaintext, or undefined when the payload is not strict Base64 of whole
   * blocks with valid PKCS#7 padding (the reference {@link decrypt} then
   * decides: it is more lenient about Base64 and reports the error).
   */
  decryptView(v: RecvView): Buffer | undefined {
    const n = this.decryptViewOpened(v);
    return n < 0 ? undefined : this.opened.subarray(0, n);
  }

  /** {@link decryptView} into {@link opened}: the plaintext's length, or -1 where decryptView gives undefined. */
  private decryptViewOpened(v: RecvView): number {
    const s = this.scratchOf(v.end - v.payloadAt);
    const n = decodeBase64Strict(v.buf, v.payloadAt, v.end, s);
    if (n <= 0 || n % BLOCK !== 0) return -1;
    let raw = this.rawView;
    if (raw === undefined || raw.length !== n) raw = this.rawView = s.subarray(0, n);
    return this.cbcDecryptOpened(raw);
  }

  /**
   * {@link verifyRecvView} then {@link decryptView}, the plaintext left in
   * {@link opened} rather than cut to a view: its length, or -1 when either
   * declines (the reference path then decides).
   */
  openRecvView(v: RecvView): number {
    const wk = this.wk;
    if (wk === undefined) return this.verifyRecvView(v) ? this.decryptViewOpened(v) : -1;
    if (v.msgKeyLen !== MSG_KEY_CHARS) return -1;
    const wireBytes = v.end - v.payloadAt;
    let out = this.nativeOpened;
    if (out === undefined || out.length < wireBytes) out = this.nativeOpened = Buffer.allocUnsafeSlow(Math.max(wireBytes, 1024));
    this.opened = out;
    // The native call writes the sign text's prefix itself, from the frame's bytes where these say.
    const f = recvFields;
    f[RECV_FIELDS.messageIdAt] = v.messageIdAt;
    f[RECV_FIELDS.messageSeqAt] = v.messageSeqAt;
    f[RECV_FIELDS.messageSeqLen] = v.messageSeqLen;
    f[RECV_FIELDS.clientMsgNoAt] = v.clientMsgNoAt;
    f[RECV_FIELDS.clientMsgNoLen] = v.clientMsgNoLen;
    f[RECV_FIELDS.timestamp] = v.timestamp;
    f[RECV_FIELDS.fromUidAt] = v.fromUidAt;
    f[RECV_FIELDS.fromUidLen] = v.fromUidLen;
    f[RECV_FIELDS.channelIdAt] = v.channelIdAt;
    f[RECV_FIELDS.channelIdLen] = v.channelIdLen;
    f[RECV_FIELDS.channelType] = v.channelType;
    f[RECV_FIELDS.msgKeyAt] = v.msgKeyAt;
    f[RECV_FIELDS.payloadAt] = v.payloadAt;
    f[RECV_FIELDS.end] = v.end;
    const got = wk.openRecv(this.native(wk), v.buf, f, out);
    return got < 0 ? -1 : got;
  }

  /** Client side: verifies a RECV's msg_key and returns its plaintext payload. */
  openRecv(p: RecvPacket): Buffer {
    if (p.setting & Setting.NO_ENCRYPT) return Buffer.from(p.payload.buffer, p.payload.byteOffset, p.payload.byteLength);
    if (this.recvMsgKey(p) !== p.msgKey) throw new WkprotoCryptoError('MSG_KEY_MISMATCH', 'RECV msg_key does not verify');
    return this.decrypt(p.payload);
  }
}

/**
 * Where the native `openRecv` finds a RECV's fields: indexes of its Int32Array
 * argument, in the order of @parley/wkcrypto's F_* constants (wkcrypto.c).
 */
export const RECV_FIELDS = {
  messageIdAt: 0,
  messageSeqAt: 1,
  messageSeqLen: 2,
  clientMsgNoAt: 3,
  clientMsgNoLen: 4,
  timestamp: 5,
  fromUidAt: 6,
  fromUidLen: 7,
  channelIdAt: 8,
  channelIdLen: 9,
  channelType: 10,
  msgKeyAt: 11,
  payloadAt: 12,
  end: 13,
} as const;
/** The fields of the RECV being opened (one JavaScript thread: one array serves every session). */
const recvFields = new Int32Array(Object.keys(RECV_FIELDS).length);

/** What the server puts in its CONNACK, plus the session crypto it keeps. */
export interface ServerKeyExchange {
  session: WkSessionCrypto;
  /** CONNACK server_key: Base64Std of the server's X25519 public key. */
  serverKey: string;
  /** CONNACK salt: the 16-character IV. */
  salt: string;
}

/**
 * Server side of CONNECT: throws BAD_PUBLIC_KEY (⇒ CONNACK reason 2) for a bad client_key. With
 * no `keyPair`, a fresh one: made and used in one call into the native crypto when that is in
 * use (no key object: 107–143 µs against 166–192 on a slow host), else by {@link generateKeyPair}.
 */
export function serverKeyExchange(clientKey: string, keyPair?: WkKeyPair): ServerKeyExchange {
  let shared: Buffer;
  let serverKey: string;
  if (keyPair === undefined && wkcrypto !== undefined) {
    const both = Buffer.alloc(64);
    if (wkcrypto.x25519Exchange(peerKeyBytes(clientKey), both) !== 0) {
      throw new WkprotoCryptoError('BAD_PUBLIC_KEY', 'X25519 failed: the client key is a low-order point');
    }
    serverKey = both.toString('base64', 0, 32);
    shared = both.subarray(32);
  } else {
    keyPair ??= generateKeyPair();
    shared = sharedSecret(keyPair.privateKey, clientKey);
    serverKey = keyPair.publicKey;
  }
  const salt = randomSalt();
  return { session: new WkSessionCrypto(deriveAesKey(shared), salt), serverKey, salt };
}

/** Client side of CONNACK: IV = salt[0:16]. */
export function clientKeyExchange(privateKey: KeyObject, serverKey: string, salt: string): WkSessionCrypto {
  return new WkSessionCrypto(deriveAesKey(sharedSecret(privateKey, serverKey)), salt.slice(0, 16));
}

/** Bytes of the wire payload (Base64 of AES-CBC/PKCS#7) of `plainBytes` plaintext bytes. */
export function sealedPayloadBytes(plainBytes: number): number {
  return 4 * Math.ceil((BLOCK * (Math.floor(plainBytes / BLOCK) + 1)) / 3);
}

/**
 * One encrypted RECV as a frame shared by every session at one protocol version
 * and one view (recipient channel id, flags): everything but the msg_key and the
 * payload, which {@link WkSessionCrypto.sealRecvFrame} writes per session.
 */
export interface RecvTemplate {
  /** The frame with placeholders where the msg_key and the payload go. */
  readonly frame: Buffer;
  readonly msgKeyAt: number;
  readonly payloadAt: number;
  /** The fields the msg_key signs before the payload, as UTF-8 ({@link recvSignPrefix}). */
  readonly signPrefixBytes: Buffer;
  /** The native seal's input for `sealPlain` ({@link packRecvTemplate}), made at the first native seal. */
  sealInput: Buffer | undefined;
  /** The plaintext `sealInput` holds. */
  sealPlain: Uint8Array | undefined;
}

/** Bytes of @parley/wkcrypto's `sealRecv` input before the frame: four u32 lengths. */
const SEAL_INPUT_HEAD = 16;

/**
 * Writes @parley/wkcrypto's `sealRecv` input into `b` (at least SEAL_INPUT_HEAD +
 * payloadAt + prefixBytes + plain.length long): msgKeyAt, payloadAt, the sign
 * prefix's and the plaintext's lengths (u32 LE), then `frame` up to its payload,
 * the sign prefix (bytes, or text written as its `prefixBytes` of UTF-8) and the
 * plaintext.
 */
function writeSealInput(
  b: Buffer,
  msgKeyAt: number,
  frame: Buffer,
  payloadAt: number,
  prefix: Uint8Array | string,
  prefixBytes: number,
  plain: Uint8Array,
): void {
  // The lengths byte by byte: Buffer#writeUInt32LE went through a generic property look-up (every
  // kind of buffer reaches it) and argument checks, four times a template.
  putUint32LE(b, 0, msgKeyAt);
  putUint32LE(b, 4, payloadAt);
  putUint32LE(b, 8, prefixBytes);
  putUint32LE(b, 12, plain.length);
  frame.copy(b, SEAL_INPUT_HEAD, 0, payloadAt);
  if (typeof prefix === 'string') b.write(prefix, SEAL_INPUT_HEAD + payloadAt, 'utf8');
  else b.set(prefix, SEAL_INPUT_HEAD + payloadAt);
  b.set(plain, SEAL_INPUT_HEAD + payloadAt + prefixBytes);
}

/** @parley/wkcrypto's `sealRecv` input for `t` and `plain` ({@link writeSealInput}). */
function packRecvTemplate(t: RecvTemplate, plain: Uint8Array): Buffer {
  const prefix = t.signPrefixBytes;
  const b = Buffer.allocUnsafe(SEAL_INPUT_HEAD + t.payloadAt + prefix.length + plain.length);
  writeSealInput(b, t.msgKeyAt, t.frame, t.payloadAt, prefix, prefix.length, plain);
  return b;
}

/** Length of a msg_key: lower-hex MD5. */
const MSG_KEY_CHARS = 32;
/** What a frame holds where its msg_key goes until the seal writes it. */
const MSG_KEY_PLACEHOLDER = '0'.repeat(MSG_KEY_CHARS);

/**
 * {@link WkSessionCrypto.sealSendFrame}'s packed input to the native seal, at least `bytes`
 * long: one buffer for every session (the seal is synchronous), grown on demand, outside Node's
 * shared pool (kept, it would keep a whole pool slab alive).
 */
let sendSeal = Buffer.allocUnsafeSlow(512);
function sendSealInput(bytes: number): Buffer {
  if (sendSeal.length < bytes) sendSeal = Buffer.allocUnsafeSlow(Math.max(bytes, 2 * sendSeal.length));
  return sendSeal;
}

/** Zeros the encoder copies where a sealed payload goes (one buffer, grown on demand; never written). */
let zeros = Buffer.alloc(256);
function zeroBytes(bytes: number): Buffer {
  if (zeros.length < bytes) zeros = Buffer.alloc(Math.max(bytes, 2 * zeros.length));
  return zeros.subarray(0, bytes);
}

/**
 * Builds the {@link RecvTemplate} of `p` (its msgKey and payload ignored) for
 * `plainBytes` of plaintext at `version`: byte for byte the frame of
 * `encodePacket({ ...p, msgKey: '0'.repeat(32), payload: <zeros> }, version)`.
 * The server builds one per message (so per delivery of a 1:1 message); see
 * {@link writtenRecvTemplate} for the common shape's direct writer.
 */
export function recvTemplate(p: RecvPacket, plainBytes: number, version: number): RecvTemplate {
  return writtenRecvTemplate(p, plainBytes, version) ?? encodedRecvTemplate(p, plainBytes, version);
}

/** {@link recvTemplate} through the generic encoder: any shape, and the encoder's errors for values off the wire. */
function encodedRecvTemplate(p: RecvPacket, plainBytes: number, version: number): RecvTemplate {
  const payloadBytes = sealedPayloadBytes(plainBytes);
  const frame = encodePacket({ ...p, msgKey: '0'.repeat(MSG_KEY_CHARS), payload: Buffer.alloc(payloadBytes) }, version);
  // The body starts after byte 0 and the varint length; setting (1 byte) and the msg_key's 2-byte length come first.
  let bodyAt = 2;
  while ((frame[bodyAt - 1]! & 0x80) !== 0) bodyAt++;
  return {
    frame,
    msgKeyAt: bodyAt + 1 + 2,
    payloadAt: frame.length - payloadBytes,
    signPrefixBytes: Buffer.from(recvSignPrefix(p), 'utf8'),
    sealInput: undefined,
    sealPlain: undefined,
  };
}

/** True when `x` is an integer in [0, max] (max < 2^32). */
const isUint = (x: number, max: number): boolean => x >>> 0 === x && x <= max;

/**
 * {@link recvTemplate} written directly for the common shape (no topic, no
 * stream fields, ASCII strings, every value within its wire field): frame and
 * sign prefix without a packet copy, a sizing pass, a UTF-8
 * encoder call per string or zeroed placeholder buffers. undefined for
 * anything else, which the generic encoder then builds or refuses with its
 * own error.
 */
function writtenRecvTemplate(p: RecvPacket, plainBytes: number, version: number): RecvTemplate | undefined {
  const { setting, channelType, fromUid, channelId, clientMsgNo, messageId, messageSeq, timestamp } = p;
  if (!isUint(version, 6) || version === 0 || !isUint(setting, 0xff) || !isUint(channelType, 0xff)) return undefined;
  if ((setting & Setting.TOPIC) !== 0 || hasStreamFields(setting, version)) return undefined;
  const expire = p.expire ?? 0;
  if ((version >= 3 && !isUint(expire, 0xffff_ffff)) || (timestamp | 0) !== timestamp) return undefined;
  if (messageId < I64_MIN || messageId > I64_MAX || messageSeq < 0n || messageSeq > (version <= 5 ? U32_MAX_BIG : U64_MAX))
    return undefined;
  const f = fromUid.length;
  const c = channelId.length;
  const m = clientMsgNo.length;
  if (f > MAX_STRING_BYTES || c > MAX_STRING_BYTES || m > MAX_STRING_BYTES) return undefined;
  const seqBytes = seqSize(version);
  const payloadBytes = sealedPayloadBytes(plainBytes);
  const body = 1 + 2 + MSG_KEY_CHARS + 2 + f + 2 + c + 1 + (version >= 3 ? 4 : 0) + 2 + m + 8 + seqBytes + 4 + payloadBytes;
  if (body > MAX_REMAINING_LENGTH) return undefined;
  const frameBytes = 1 + varintSize(body) + body;
  // Frame and sign prefix in buffers of their own: a view cut from one shared buffer costs more
  // (Buffer#subarray reads the typed array's `buffer` through a getter V8 does not inline).
  const b = Buffer.allocUnsafe(frameBytes);
  b[0] = (PacketType.RECV << 4) | flagBits(p);
  let o = writeVarint(b, 1, body);
  b[o] = setting;
  b[o + 1] = 0;
  b[o + 2] = MSG_KEY_CHARS;
  const msgKeyAt = o + 3;
  o = msgKeyAt + MSG_KEY_CHARS;
  for (let i = msgKeyAt; i < o; i++) b[i] = 0x30; // the placeholder "00…0"
  o = putAsciiField(b, o, fromUid);
  if (o < 0) return undefined;
  o = putAsciiField(b, o, channelId);
  if (o < 0) return undefined;
  b[o++] = channelType;
  if (version >= 3) o = putUint32BE(b, o, expire);
  o = putAsciiField(b, o, clientMsgNo);
  if (o < 0) return undefined;
  o = putInt64BE(b, o, messageId);
  o = seqBytes === 4 ? putUint32BE(b, o, Number(messageSeq)) : putInt64BE(b, o, messageSeq);
  o = putUint32BE(b, o, timestamp >>> 0);
  b.fill(0, o, frameBytes);
  // ASCII: its strings were checked as the frame's fields were written.
  const sign = recvSignPrefix(p);
  const signPrefixBytes = Buffer.allocUnsafe(sign.length);
  writeAscii(signPrefixBytes, sign, 0);
  return { frame: b, msgKeyAt, payloadAt: o, signPrefixBytes, sealInput: undefined, sealPlain: undefined };
}
