/*
 * WKProto session crypto in one native call per operation: the server's RECV
 * seal (AES-128-CBC/PKCS#7 of the payload, Base64 into the frame, the msg_key
 * MD5 over the sign text's ciphertext) and its SEND open (msg_key check, then
 * decryption), and the client's open of a RECV read in place. The JavaScript path in @parley/protocol (src/wkproto/crypto.ts)
 * defines the bytes; this module must produce the same ones, which the
 * protocol package's tests check. Also a CONNECT's X25519 key pairs and the
 * server's shared secret, without Node's key objects. AES, MD5 and X25519 are
 * the OpenSSL that Node itself links and exports.
 *
 * Each session keeps one encrypting and one decrypting AES-128-CBC context
 * with padding off. Instead of re-initialising a context per message, each
 * message's first block is XORed with (last ciphertext block ^ IV): CBC then
 * computes exactly what a fresh context started at the IV would.
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* MD5(): one call, no context allocation */
#include <node_api.h>
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/md5.h>
#include <openssl/rand.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define BLOCK 16
#define MSG_KEY_CHARS 32
/* Work buffers on the stack up to this size; larger messages use the heap. */
#define STACK_BYTES 4096
/* Largest payload taken (a frame's body is at most 1 MiB): keeps every length within OpenSSL's int. */
#define MAX_BYTES (64u << 20)

typedef struct {
  EVP_CIPHER_CTX *enc;
  EVP_CIPHER_CTX *dec;
  unsigned char iv[BLOCK];
  unsigned char enc_prev[BLOCK]; /* last ciphertext block the encrypting context produced */
  unsigned char dec_prev[BLOCK]; /* last ciphertext block the decrypting context consumed */
} session_t;

/* Marks the externals js_session makes, so that session_of takes no other. */
static const napi_type_tag SESSION_TAG = {0x8e1f3c2a5b7d4e60ULL, 0x9a0b1c2d3e4f5061ULL};

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char HEX[] = "0123456789abcdef";

/* The two Base64 symbols of every 12-bit value, in output order (filled by init). */
static unsigned char B64_PAIRS[4096][2];

static size_t b64_len(size_t n) { return 4 * ((n + 2) / 3); }

#if defined(__x86_64__)
#include <immintrin.h>
#define B64_SIMD 1
/* Whether this CPU has SSSE3 (set by init): the encoder then takes 12 bytes per step. */
static int b64_ssse3;

/*
 * Standard Base64 of `in` 12 bytes at a time (SSSE3), while 16 bytes can be
 * read: the number of input bytes encoded (a multiple of 12), their 4/3 as
 * many symbols at `out`. Each 3 input bytes s0 s1 s2 are shuffled into a
 * 32-bit lane as s1 s0 s2 s1, so that its two 16-bit halves hold the first
 * two and the last two 6-bit values at fixed bit positions; two multiplies
 * (high half, low half) move each to a byte of its own, and one table look-up
 * (pshufb) gives each value's offset to its symbol: 'A'-0 for 0-25, 'a'-26 for
 * 26-51, '0'-52 for 52-61, '+'-62 and '/'-63.
 */
__attribute__((target("ssse3"))) static size_t b64_encode_ssse3(const unsigned char *in, size_t n, unsigned char *out) {
  const __m128i spread = _mm_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
  const __m128i offsets = _mm_setr_epi8(71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 65, 0, 0);
  size_t i = 0;
  for (; i + 16 <= n; i += 12) {
    __m128i lanes = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(in + i)), spread);
    /* First and third value: (a << 10) * 2^6 >> 16 and (c << 6) * 2^10 >> 16 into bytes 0 and 2. */
    __m128i ac = _mm_mulhi_epu16(_mm_and_si128(lanes, _mm_set1_epi32(0x0fc0fc00)), _mm_set1_epi32(0x04000040));
    /* Second and fourth: (b << 4) * 2^4 and d * 2^8 into bytes 1 and 3. */
    __m128i bd = _mm_mullo_epi16(_mm_and_si128(lanes, _mm_set1_epi32(0x003f03f0)), _mm_set1_epi32(0x01000010));
    __m128i values = _mm_or_si128(ac, bd);
    /* Offset index: 13 for 0-25, 0 for 26-51, 1-10 for 52-61, 11 for 62, 12 for 63. */
    __m128i index = _mm_subs_epu8(values, _mm_set1_epi8(51));
    index = _mm_or_si128(index, _mm_and_si128(_mm_cmpgt_epi8(_mm_set1_epi8(26), values), _mm_set1_epi8(13)));
    _mm_storeu_si128((__m128i *)out, _mm_add_epi8(values, _mm_shuffle_epi8(offsets, index)));
    out += 16;
  }
  return i;
}
#endif

static void b64_encode(const unsigned char *in, size_t n, unsigned char *out) {
  size_t i = 0;
#ifdef B64_SIMD
  if (b64_ssse3) {
    i = b64_encode_ssse3(in, n, out);
    out += i / 3 * 4;
  }
#endif
  for (; i + 3 <= n; i += 3) {
    uint32_t v = ((uint32_t)in[i] << 16) | ((uint32_t)in[i + 1] << 8) | in[i + 2];
    memcpy(out, B64_PAIRS[v >> 12], 2);
    memcpy(out + 2, B64_PAIRS[v & 4095], 2);
    out += 4;
  }
  if (n - i == 1) {
    uint32_t v = (uint32_t)in[i] << 16;
    *out++ = B64[v >> 18];
    *out++ = B64[(v >> 12) & 63];
    *out++ = '=';
    *out++ = '=';
  } else if (n - i == 2) {
    uint32_t v = ((uint32_t)in[i] << 16) | ((uint32_t)in[i + 1] << 8);
    *out++ = B64[v >> 18];
    *out++ = B64[(v >> 12) & 63];
    *out++ = B64[(v >> 6) & 63];
    *out++ = '=';
  }
}

/* Each byte's 6-bit value as a Standard Base64 symbol, -1 for any other byte (filled by init). */
static signed char B64_VALUES[256];

static int b64_value(unsigned char c) { return B64_VALUES[c]; }

/* Strict padded Standard Base64 decoding: the byte count, or -1 for anything else. */
static long b64_decode_strict(const unsigned char *in, size_t n, unsigned char *out) {
  if (n == 0 || n % 4 != 0) return -1;
  size_t o = 0, i = 0;
  /* Every quad but the last has no padding: four symbols, three bytes (a non-symbol's -1 makes the OR negative). */
  for (; i + 4 < n; i += 4) {
    int32_t a = B64_VALUES[in[i]], b = B64_VALUES[in[i + 1]], c = B64_VALUES[in[i + 2]], d = B64_VALUES[in[i + 3]];
    if ((a | b | c | d) < 0) return -1;
    uint32_t v = ((uint32_t)a << 18) | ((uint32_t)b << 12) | ((uint32_t)c << 6) | (uint32_t)d;
    out[o] = (unsigned char)(v >> 16);
    out[o + 1] = (unsigned char)(v >> 8);
    out[o + 2] = (unsigned char)v;
    o += 3;
  }
  for (; i < n; i += 4) {
    int a = b64_value(in[i]), b = b64_value(in[i + 1]);
    if (a < 0 || b < 0) return -1;
    int last = i + 4 == n;
    if (last && in[i + 2] == '=') {
      if (in[i + 3] != '=' || (b & 15) != 0) return -1;
      out[o++] = (unsigned char)((a << 2) | (b >> 4));
      return (long)o;
    }
    int c = b64_value(in[i + 2]);
    if (c < 0) return -1;
    if (last && in[i + 3] == '=') {
      if ((c & 3) != 0) return -1;
      out[o++] = (unsigned char)((a << 2) | (b >> 4));
      out[o++] = (unsigned char)(((b & 15) << 4) | (c >> 2));
      return (long)o;
    }
    int d = b64_value(in[i + 3]);
    if (d < 0) return -1;
    out[o++] = (unsigned char)((a << 2) | (b >> 4));
    out[o++] = (unsigned char)(((b & 15) << 4) | (c >> 2));
    out[o++] = (unsigned char)(((c & 3) << 6) | d);
  }
  return (long)o;
}

/* AES-128-CBC from the session IV of `buf` (n bytes, whole blocks), in place. */
static int cbc_encrypt(session_t *s, unsigned char *buf, size_t n) {
  for (int i = 0; i < BLOCK; i++) buf[i] ^= s->enc_prev[i] ^ s->iv[i];
  int out = 0;
  if (EVP_EncryptUpdate(s->enc, buf, &out, buf, (int)n) != 1 || (size_t)out != n) return -1;
  memcpy(s->enc_prev, buf + n - BLOCK, BLOCK);
  return 0;
}

/* AES-128-CBC decryption from the session IV of `in` (n bytes, whole blocks) into `out`. */
static int cbc_decrypt(session_t *s, const unsigned char *in, size_t n, unsigned char *out) {
  int got = 0;
  if (EVP_DecryptUpdate(s->dec, out, &got, in, (int)n) != 1 || (size_t)got != n) return -1;
  for (int i = 0; i < BLOCK; i++) out[i] ^= s->dec_prev[i] ^ s->iv[i];
  memcpy(s->dec_prev, in + n - BLOCK, BLOCK);
  return 0;
}

/* PKCS#7-pads `n` bytes at `buf` (room for one more block): the padded length. */
static size_t pad(unsigned char *buf, size_t n) {
  size_t p = BLOCK - n % BLOCK;
  memset(buf + n, (int)p, p);
  return n + p;
}

/* A work buffer of `len` bytes: `stack` (STACK_BYTES) when it fits, else the heap (NULL when that fails). */
static unsigned char *work_take(unsigned char *stack, size_t len) { return len <= STACK_BYTES ? stack : malloc(len); }

/* Gives back a buffer of work_take. */
static void work_give(unsigned char *work, unsigned char *stack) {
  if (work != stack) free(work);
}

/* lower-hex MD5(Base64(AES-CBC(sign[0, n) padded))) into `key` (32 bytes); `sign` has room for the padding. */
static int msg_key(session_t *s, unsigned char *sign, size_t n, unsigned char *key) {
  size_t padded = pad(sign, n);
  if (cbc_encrypt(s, sign, padded) != 0) return -1;
  size_t text_len = b64_len(padded);
  unsigned char stack[STACK_BYTES];
  unsigned char *text = work_take(stack, text_len);
  if (text == NULL) return -1;
  b64_encode(sign, padded, text);
  unsigned char md[MD5_DIGEST_LENGTH];
  MD5(text, text_len, md);
  work_give(text, stack);
  for (int i = 0; i < MD5_DIGEST_LENGTH; i++) {
    key[2 * i] = (unsigned char)HEX[md[i] >> 4];
    key[2 * i + 1] = (unsigned char)HEX[md[i] & 15];
  }
  return 0;
}

/*
 * Decrypts the strict Base64 `wire` (decoded into `work`, which has room for
 * it) into `out` and checks its PKCS#7 padding: the plaintext's length, or -2
 * when the wire is not strict Base64 of whole blocks, -3 for bad padding, -4
 * when the cipher fails.
 */
static long open_payload(session_t *s, const unsigned char *wire, size_t wire_len, unsigned char *work, unsigned char *out) {
  long raw = b64_decode_strict(wire, wire_len, work);
  if (raw <= 0 || raw % BLOCK != 0) return -2;
  if (cbc_decrypt(s, work, (size_t)raw, out) != 0) return -4;
  unsigned char p = out[raw - 1];
  if (p == 0 || p > BLOCK) return -3;
  for (long i = raw - p; i < raw; i++)
    if (out[i] != p) return -3;
  return raw - p;
}

static void session_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  session_t *s = data;
  EVP_CIPHER_CTX_free(s->enc);
  EVP_CIPHER_CTX_free(s->dec);
  OPENSSL_cleanse(s, sizeof *s);
  free(s);
}

#define CHECK(call)                                   \
  do {                                                \
    if ((call) != napi_ok) {                          \
      napi_throw_error(env, NULL, "wkcrypto: " #call); \
      return NULL;                                    \
    }                                                 \
  } while (0)

/* The bytes of a Uint8Array (a Buffer): 0, or -1 for anything else. */
static int bytes_of(napi_env env, napi_value v, unsigned char **data, size_t *len) {
  napi_typedarray_type type;
  void *p;
  if (napi_get_typedarray_info(env, v, &type, len, &p, NULL, NULL) != napi_ok || type != napi_uint8_array) return -1;
  *data = p;
  return 0;
}

/* session(key: Uint8Array(16), iv: Uint8Array(16)) -> External */
static napi_value js_session(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  unsigned char *key, *iv;
  size_t key_len, iv_len;
  if (argc < 2 || bytes_of(env, argv[0], &key, &key_len) || bytes_of(env, argv[1], &iv, &iv_len) || key_len != BLOCK || iv_len != BLOCK) {
    napi_throw_type_error(env, NULL, "wkcrypto: session(key, iv) takes two 16-byte Uint8Arrays");
    return NULL;
  }
  session_t *s = calloc(1, sizeof *s);
  if (s == NULL) {
    napi_throw_error(env, NULL, "wkcrypto: out of memory");
    return NULL;
  }
  s->enc = EVP_CIPHER_CTX_new();
  s->dec = EVP_CIPHER_CTX_new();
  if (s->enc == NULL || s->dec == NULL || EVP_EncryptInit_ex(s->enc, EVP_aes_128_cbc(), NULL, key, iv) != 1 ||
      EVP_DecryptInit_ex(s->dec, EVP_aes_128_cbc(), NULL, key, iv) != 1 || EVP_CIPHER_CTX_set_padding(s->enc, 0) != 1 ||
      EVP_CIPHER_CTX_set_padding(s->dec, 0) != 1) {
    session_finalize(env, s, NULL);
    napi_throw_error(env, NULL, "wkcrypto: AES-128-CBC context set-up failed");
    return NULL;
  }
  memcpy(s->iv, iv, BLOCK);
  memcpy(s->enc_prev, iv, BLOCK);
  memcpy(s->dec_prev, iv, BLOCK);
  napi_value out;
  if (napi_create_external(env, s, session_finalize, NULL, &out) != napi_ok) {
    session_finalize(env, s, NULL);
    napi_throw_error(env, NULL, "wkcrypto: napi_create_external failed");
    return NULL;
  }
  if (napi_type_tag_object(env, out, &SESSION_TAG) != napi_ok) {
    napi_throw_error(env, NULL, "wkcrypto: napi_type_tag_object failed");
    return NULL;
  }
  return out;
}

/* The session behind `v`, or NULL unless it is one this module made (type-tagged: another addon's external is refused). */
static session_t *session_of(napi_env env, napi_value v) {
  bool ours = false;
  void *p = NULL;
  if (napi_check_object_type_tag(env, v, &SESSION_TAG, &ours) != napi_ok || !ours || napi_get_value_external(env, v, &p) != napi_ok) return NULL;
  return p;
}

/*
 * The call's `n` arguments into `argv` and the session its first one names:
 * NULL unless there are exactly `n` and the first is a session of this module.
 */
static session_t *session_call(napi_env env, napi_callback_info info, size_t n, napi_value *argv) {
  size_t argc = n;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != n) return NULL;
  return session_of(env, argv[0]);
}

/* A little-endian u32 at `p`. */
static uint32_t le32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* Bytes before the template in sealRecv's packed input: msgKeyAt, payloadAt, the sign prefix's and the plaintext's lengths. */
#define PACKED_HEAD 16

/*
 * sealRecv(s, packed, out) -> undefined
 * `packed` is one frame template's input (a RECV's on the server, made once
 * per template and message; a SEND's on the client), two typed arrays a call
 * instead of five arguments' look-ups: msgKeyAt,
 * payloadAt, the sign prefix's length and the plaintext's length as
 * little-endian u32s, then the template's first payloadAt bytes, the sign
 * prefix and the plaintext. `out` (payloadAt + the Base64 of the padded
 * plaintext's length) receives those template bytes, the Base64 of the
 * encrypted plaintext from payloadAt (filling the frame to its end) and the
 * msg_key over the sign prefix + that Base64 at msgKeyAt.
 */
static napi_value js_seal_recv(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  session_t *s = session_call(env, info, 3, argv);
  unsigned char *packed, *out;
  size_t packed_len, out_len;
  if (s == NULL || bytes_of(env, argv[1], &packed, &packed_len) || bytes_of(env, argv[2], &out, &out_len)) {
    napi_throw_type_error(env, NULL, "wkcrypto: sealRecv(session, packed, out)");
    return NULL;
  }
  uint32_t key_at = 0, payload_at = 0, prefix_len = 0, plain_len = 0;
  if (packed_len >= PACKED_HEAD) {
    key_at = le32(packed);
    payload_at = le32(packed + 4);
    prefix_len = le32(packed + 8);
    plain_len = le32(packed + 12);
  }
  size_t padded = ((size_t)plain_len / BLOCK + 1) * BLOCK;
  if (packed_len < PACKED_HEAD || plain_len > MAX_BYTES || prefix_len > MAX_BYTES || payload_at > MAX_BYTES ||
      (uint64_t)PACKED_HEAD + payload_at + prefix_len + plain_len != packed_len || (size_t)key_at + MSG_KEY_CHARS > payload_at ||
      out_len != payload_at + b64_len(padded)) {
    napi_throw_range_error(env, NULL, "wkcrypto: sealRecv: the packed template does not fit its lengths or out");
    return NULL;
  }
  if (out < packed + packed_len && packed < out + out_len) {
    napi_throw_range_error(env, NULL, "wkcrypto: sealRecv: out overlaps the packed template");
    return NULL;
  }
  const unsigned char *tpl = packed + PACKED_HEAD;
  const unsigned char *prefix = tpl + payload_at;
  const unsigned char *plain = prefix + prefix_len;
  size_t wire_len = out_len - payload_at;
  /* One work buffer: the padded plaintext, later the sign text (prefix + Base64 payload + padding). */
  size_t work_len = padded > prefix_len + wire_len + BLOCK ? padded : prefix_len + wire_len + BLOCK;
  unsigned char stack[STACK_BYTES];
  unsigned char *work = work_take(stack, work_len);
  if (work == NULL) {
    napi_throw_error(env, NULL, "wkcrypto: out of memory");
    return NULL;
  }
  memcpy(out, tpl, payload_at);
  memcpy(work, plain, plain_len);
  pad(work, plain_len);
  int failed = cbc_encrypt(s, work, padded);
  if (!failed) {
    b64_encode(work, padded, out + payload_at);
    memcpy(work, prefix, prefix_len);
    memcpy(work + prefix_len, out + payload_at, wire_len);
    failed = msg_key(s, work, prefix_len + wire_len, out + key_at);
  }
  work_give(work, stack);
  if (failed) napi_throw_error(env, NULL, "wkcrypto: AES-128-CBC failed");
  return NULL;
}

/* Whether two msg_keys (MSG_KEY_CHARS bytes) are equal, in time independent of where they differ. */
static int same_key(const unsigned char *a, const unsigned char *b) {
  uint64_t diff = 0;
  for (int i = 0; i < MSG_KEY_CHARS; i += 8) {
    uint64_t x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    diff |= x ^ y;
  }
  return diff == 0;
}

/*
 * The common part of both opens: `work` holds the sign text's prefix
 * (prefix_len bytes) and has room for `wire` after it and a block more;
 * the sign text is that prefix followed by `wire`. Its msg_key must equal
 * `key` (key_len bytes), then `wire` is decrypted into `out`: the plaintext's
 * length, or -1, -2, -3 (see openSend), or -4 when the cipher fails.
 */
static long verify_open(session_t *s, unsigned char *work, size_t prefix_len, const unsigned char *wire, size_t wire_len,
                        const unsigned char *key, size_t key_len, unsigned char *out) {
  memcpy(work + prefix_len, wire, wire_len);
  unsigned char want[MSG_KEY_CHARS];
  if (msg_key(s, work, prefix_len + wire_len, want) != 0) return -4;
  if (key_len != MSG_KEY_CHARS || !same_key(want, key)) return -1;
  return open_payload(s, wire, wire_len, work, out);
}

/* An open's result as a JavaScript number, or NULL with an error thrown when the cipher failed (-4). */
static napi_value open_result(napi_env env, long result) {
  if (result == -4) {
    napi_throw_error(env, NULL, "wkcrypto: AES-128-CBC failed");
    return NULL;
  }
  napi_value v;
  CHECK(napi_create_int64(env, result, &v));
  return v;
}

/*
 * openSend(s, signPrefix: string, wire, msgKey: string, out) -> number
 * Checks msgKey against the UTF-8 of signPrefix + the wire payload, then
 * decrypts the strict Base64 `wire` into `out` (at least 3/4 of wire's
 * length): the plaintext's length, or -1 when the msg_key does not verify, -2
 * when the wire is not strict Base64 of whole blocks (the caller's lenient
 * decoder decides), -3 when the PKCS#7 padding is bad.
 */
static napi_value js_open_send(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  session_t *s = session_call(env, info, 5, argv);
  unsigned char *wire, *out;
  size_t prefix_len, wire_len, out_len;
  if (s == NULL || napi_get_value_string_utf8(env, argv[1], NULL, 0, &prefix_len) != napi_ok || bytes_of(env, argv[2], &wire, &wire_len) ||
      bytes_of(env, argv[4], &out, &out_len) || out_len < wire_len / 4 * 3 || wire_len > MAX_BYTES || prefix_len > MAX_BYTES) {
    napi_throw_type_error(env, NULL, "wkcrypto: openSend(session, signPrefix, wire, msgKey, out)");
    return NULL;
  }
  /* The msg_key as UTF-8: it verifies only as exactly 32 lower-hex characters. */
  char key[MSG_KEY_CHARS + 2];
  size_t key_len;
  if (napi_get_value_string_utf8(env, argv[3], key, sizeof key, &key_len) != napi_ok) {
    napi_throw_type_error(env, NULL, "wkcrypto: openSend: msgKey must be a string");
    return NULL;
  }
  unsigned char stack[STACK_BYTES];
  unsigned char *work = work_take(stack, prefix_len + 1 + wire_len + BLOCK);
  if (work == NULL) {
    napi_throw_error(env, NULL, "wkcrypto: out of memory");
    return NULL;
  }
  size_t copied = 0;
  napi_get_value_string_utf8(env, argv[1], (char *)work, prefix_len + 1, &copied);
  long result = copied == prefix_len ? verify_open(s, work, prefix_len, wire, wire_len, (const unsigned char *)key, key_len, out) : -4;
  work_give(work, stack);
  return open_result(env, result);
}

/* The two digits of every value below 100, in order. */
static const char DIGIT_PAIRS[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/* The decimal digits of `x` at `out`: their count (at most 20). Two digits a division (by a constant: a multiply). */
static size_t u64_decimal(uint64_t x, unsigned char *out) {
  unsigned char digits[20];
  size_t i = sizeof digits;
  while (x >= 100) {
    uint64_t q = x / 100;
    i -= 2;
    memcpy(digits + i, DIGIT_PAIRS + 2 * (x - q * 100), 2);
    x = q;
  }
  if (x >= 10) {
    i -= 2;
    memcpy(digits + i, DIGIT_PAIRS + 2 * x, 2);
  } else
    digits[--i] = (unsigned char)('0' + x);
  memcpy(out, digits + i, sizeof digits - i);
  return sizeof digits - i;
}

/* The decimal text at `out` of the two's complement int64 whose bits are `x` ('-' first when negative): its length. */
static size_t i64_decimal(uint64_t x, unsigned char *out) {
  if ((x >> 63) == 0) return u64_decimal(x, out);
  out[0] = '-';
  return 1 + u64_decimal(0 - x, out + 1);
}

static uint64_t be64(const unsigned char *p) {
  uint64_t x = 0;
  for (int i = 0; i < 8; i++) x = (x << 8) | p[i];
  return x;
}

static uint32_t be32(const unsigned char *p) { return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]; }

/* Indexes of openRecv's `fields` (an Int32Array): where a RECV's fields lie in its frame (see scanRecv). */
enum {
  F_MESSAGE_ID_AT,   /* 8 bytes, a big-endian int64 */
  F_MESSAGE_SEQ_AT,  /* F_MESSAGE_SEQ_LEN bytes, big-endian unsigned */
  F_MESSAGE_SEQ_LEN, /* 4 or 8 */
  F_CLIENT_MSG_NO_AT,
  F_CLIENT_MSG_NO_LEN,
  F_TIMESTAMP, /* the value, an int32 */
  F_FROM_UID_AT,
  F_FROM_UID_LEN,
  F_CHANNEL_ID_AT,
  F_CHANNEL_ID_LEN,
  F_CHANNEL_TYPE, /* the value, 0-255 */
  F_MSG_KEY_AT,   /* 32 bytes */
  F_PAYLOAD_AT,   /* the payload is frame[F_PAYLOAD_AT, F_END) */
  F_END,
  F_COUNT
};

/* Whether frame[at, at + len) lies within `frame_len` bytes. */
static int within(int32_t at, int32_t len, size_t frame_len) { return at >= 0 && len >= 0 && (size_t)at + (size_t)len <= frame_len; }

/* The sign text's prefix of the RECV whose fields lie in `frame` where `f` says (in bounds), at `work`: its length. */
static size_t recv_sign_prefix(const unsigned char *frame, const int32_t *f, unsigned char *work) {
  size_t n = i64_decimal(be64(frame + f[F_MESSAGE_ID_AT]), work);
  const unsigned char *seq = frame + f[F_MESSAGE_SEQ_AT];
  n += u64_decimal(f[F_MESSAGE_SEQ_LEN] == 4 ? be32(seq) : be64(seq), work + n);
  memcpy(work + n, frame + f[F_CLIENT_MSG_NO_AT], (size_t)f[F_CLIENT_MSG_NO_LEN]);
  n += (size_t)f[F_CLIENT_MSG_NO_LEN];
  n += i64_decimal((uint64_t)(int64_t)f[F_TIMESTAMP], work + n);
  memcpy(work + n, frame + f[F_FROM_UID_AT], (size_t)f[F_FROM_UID_LEN]);
  n += (size_t)f[F_FROM_UID_LEN];
  memcpy(work + n, frame + f[F_CHANNEL_ID_AT], (size_t)f[F_CHANNEL_ID_LEN]);
  n += (size_t)f[F_CHANNEL_ID_LEN];
  n += u64_decimal((uint64_t)f[F_CHANNEL_TYPE], work + n);
  return n;
}

/* Digits: id at most 20 ('-' and 19), seq 20, timestamp 11, channel type 3; with the strings, the sign prefix's most. */
static size_t recv_prefix_max(const int32_t *f) {
  return 54 + (size_t)f[F_CLIENT_MSG_NO_LEN] + (size_t)f[F_FROM_UID_LEN] + (size_t)f[F_CHANNEL_ID_LEN];
}

/*
 * Verifies and decrypts the RECV whose fields (in bounds) lie in `frame` where
 * `f` says, into `out` (room for 3/4 of the payload): the plaintext's length,
 * -1, -2, -3 as openSend, -4 when the cipher fails, -5 out of memory.
 */
static long recv_open(session_t *s, const unsigned char *frame, const int32_t *f, unsigned char *out) {
  size_t wire_len = (size_t)(f[F_END] - f[F_PAYLOAD_AT]);
  unsigned char stack[STACK_BYTES];
  unsigned char *work = work_take(stack, recv_prefix_max(f) + wire_len + BLOCK);
  if (work == NULL) return -5;
  /* The sign text's prefix, written where verify_open puts the payload after it. */
  size_t n = recv_sign_prefix(frame, f, work);
  long result = verify_open(s, work, n, frame + f[F_PAYLOAD_AT], wire_len, frame + f[F_MSG_KEY_AT], MSG_KEY_CHARS, out);
  work_give(work, stack);
  return result;
}

/*
 * openRecv(s, frame, fields, out) -> number
 * The client side of a RECV read in place, its fields where `fields` (an
 * Int32Array of F_COUNT, above) says: the sign text's prefix (message id,
 * message seq, client_msg_no, timestamp, from_uid, channel id, channel type:
 * numbers in decimal, strings as their bytes) is written here from the
 * frame's bytes, the msg_key at F_MSG_KEY_AT checked against it +
 * frame[F_PAYLOAD_AT, F_END), then that payload (strict Base64) decrypted into
 * `out` (at least 3/4 of its length): the plaintext's length, or -1 when the
 * msg_key does not verify, -2 when the payload is not strict Base64 of whole
 * blocks, -3 when the PKCS#7 padding is bad (the caller's reference path then
 * decides). Throws when a field lies outside the frame.
 */
static napi_value js_open_recv(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  session_t *s = session_call(env, info, 4, argv);
  unsigned char *frame, *out;
  size_t frame_len, out_len, count = 0;
  napi_typedarray_type type = napi_uint8_array;
  void *data = NULL;
  if (s == NULL || bytes_of(env, argv[1], &frame, &frame_len) ||
      napi_get_typedarray_info(env, argv[2], &type, &count, &data, NULL, NULL) != napi_ok || type != napi_int32_array || count < F_COUNT ||
      bytes_of(env, argv[3], &out, &out_len)) {
    napi_throw_type_error(env, NULL, "wkcrypto: openRecv(session, frame, fields: Int32Array, out)");
    return NULL;
  }
  const int32_t *f = data;
  int32_t seq_len = f[F_MESSAGE_SEQ_LEN];
  if (!within(f[F_MESSAGE_ID_AT], 8, frame_len) || (seq_len != 4 && seq_len != 8) || !within(f[F_MESSAGE_SEQ_AT], seq_len, frame_len) ||
      !within(f[F_CLIENT_MSG_NO_AT], f[F_CLIENT_MSG_NO_LEN], frame_len) || !within(f[F_FROM_UID_AT], f[F_FROM_UID_LEN], frame_len) ||
      !within(f[F_CHANNEL_ID_AT], f[F_CHANNEL_ID_LEN], frame_len) || f[F_CHANNEL_TYPE] < 0 || f[F_CHANNEL_TYPE] > 255 ||
      !within(f[F_MSG_KEY_AT], MSG_KEY_CHARS, frame_len) || f[F_PAYLOAD_AT] < 0 || f[F_END] < f[F_PAYLOAD_AT] || (size_t)f[F_END] > frame_len ||
      (size_t)(f[F_END] - f[F_PAYLOAD_AT]) > MAX_BYTES || out_len < (size_t)(f[F_END] - f[F_PAYLOAD_AT]) / 4 * 3) {
    napi_throw_range_error(env, NULL, "wkcrypto: openRecv: a field lies outside the frame");
    return NULL;
  }
  long result = recv_open(s, frame, f, out);
  if (result == -5) {
    napi_throw_error(env, NULL, "wkcrypto: out of memory");
    return NULL;
  }
  return open_result(env, result);
}

/* Packet types and RECV setting bits (the protocol package's constants.ts). */
#define TYPE_RECV 5
#define TYPE_RECVACK 6
#define SETTING_STREAM 0x02
#define SETTING_TOPIC 0x08
#define SETTING_NO_ENCRYPT 0x10

/* Length of the ASCII string field at b[p] (2-byte length first), or -1 when it does not fit before `end` or is not ASCII. */
static long ascii_field(const unsigned char *b, size_t p, size_t end) {
  if (p > end || end - p < 2) return -1;
  size_t len = ((size_t)b[p] << 8) | b[p + 1];
  if (len > 0x7fff || end - p - 2 < len) return -1;
  size_t i = p + 2, stop = p + 2 + len;
  for (; i + 8 <= stop; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    if (w & 0x8080808080808080ULL) return -1;
  }
  for (; i < stop; i++)
    if (b[i] >= 0x80) return -1;
  return (long)len;
}

/*
 * The fields of the RECV body b[start, end) at `version` into `f`: 0 when it
 * has the shape the batch open takes (as the protocol package's scanRecv,
 * and also encrypted, with a 32-character msg_key), else -1: the reference
 * path decides.
 */
static int scan_recv(const unsigned char *b, size_t start, size_t end, int version, int32_t *f) {
  size_t p = start;
  if (p >= end) return -1;
  unsigned setting = b[p++];
  if ((version >= 2 && version <= 4 && (setting & SETTING_STREAM)) || (setting & (SETTING_TOPIC | SETTING_NO_ENCRYPT))) return -1;
  long n = ascii_field(b, p, end);
  if (n != MSG_KEY_CHARS) return -1;
  f[F_MSG_KEY_AT] = (int32_t)(p + 2);
  p += 2 + (size_t)n;
  if ((n = ascii_field(b, p, end)) < 0) return -1;
  f[F_FROM_UID_AT] = (int32_t)(p + 2);
  f[F_FROM_UID_LEN] = (int32_t)n;
  p += 2 + (size_t)n;
  if ((n = ascii_field(b, p, end)) < 0) return -1;
  f[F_CHANNEL_ID_AT] = (int32_t)(p + 2);
  f[F_CHANNEL_ID_LEN] = (int32_t)n;
  p += 2 + (size_t)n;
  if (p >= end) return -1;
  f[F_CHANNEL_TYPE] = b[p++];
  if (version >= 3) p += 4; /* expire */
  if ((n = ascii_field(b, p, end)) < 0) return -1;
  f[F_CLIENT_MSG_NO_AT] = (int32_t)(p + 2);
  f[F_CLIENT_MSG_NO_LEN] = (int32_t)n;
  p += 2 + (size_t)n;
  size_t seq_len = version <= 5 ? 4 : 8;
  if (end - p < 8 + seq_len + 4) return -1;
  f[F_MESSAGE_ID_AT] = (int32_t)p;
  f[F_MESSAGE_SEQ_AT] = (int32_t)(p + 8);
  f[F_MESSAGE_SEQ_LEN] = (int32_t)seq_len;
  p += 8 + seq_len;
  f[F_TIMESTAMP] = (int32_t)be32(b + p);
  f[F_PAYLOAD_AT] = (int32_t)(p + 4);
  f[F_END] = (int32_t)end;
  return (end - f[F_PAYLOAD_AT]) <= MAX_BYTES ? 0 : -1;
}

/*
 * One receiving session of the batch open: its AES contexts (kept alive by
 * `ref`), protocol version, largest frame body, and the socket descriptor its
 * RECVACKs are written to here (-1: they are handed back).
 */
typedef struct {
  session_t *session;
  napi_ref ref;
  int version;
  uint32_t max_remaining;
  int fd;
} slot_t;

/* The receiving sessions of one JavaScript environment (its instance data), by slot number. */
typedef struct {
  slot_t *slots;
  uint32_t count;
} slots_t;

#define MAX_SLOTS (1u << 20)
#define align4(n) (((n) + 3) & ~(size_t)3)

static void slots_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  slots_t *t = data;
  for (uint32_t i = 0; i < t->count; i++)
    if (t->slots[i].ref != NULL) napi_delete_reference(env, t->slots[i].ref);
  free(t->slots);
  free(t);
}

static slots_t *slots_of(napi_env env) {
  void *data = NULL;
  if (napi_get_instance_data(env, &data) != napi_ok) return NULL;
  return data;
}

/*
 * recvSlot(slot, session | null, version, maxRemaining, fd) -> undefined
 * Names `session` (kept alive until replaced or cleared) by `slot` for
 * openRecvReads, with the protocol version its RECVs are read at, the
 * largest frame body its decoder takes and the descriptor of its socket
 * (RECVACKs written here; -1: handed back); null clears the slot.
 */
static napi_value js_recv_slot(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint32_t slot = 0, max_remaining = 0;
  int32_t version = 0, fd = -1;
  napi_valuetype kind = napi_undefined;
  if (argc != 5 || napi_get_value_uint32(env, argv[0], &slot) != napi_ok || napi_typeof(env, argv[1], &kind) != napi_ok ||
      napi_get_value_int32(env, argv[2], &version) != napi_ok || napi_get_value_uint32(env, argv[3], &max_remaining) != napi_ok ||
      napi_get_value_int32(env, argv[4], &fd) != napi_ok || slot >= MAX_SLOTS || version < 1 || version > 255 || fd < -1) {
    napi_throw_type_error(env, NULL, "wkcrypto: recvSlot(slot < 2^20, session | null, version 1-255, maxRemaining, fd >= -1)");
    return NULL;
  }
  session_t *s = NULL;
  if (kind != napi_null && (s = session_of(env, argv[1])) == NULL) {
    napi_throw_type_error(env, NULL, "wkcrypto: recvSlot: not a session of this module");
    return NULL;
  }
  slots_t *t = slots_of(env);
  if (t == NULL) {
    if ((t = calloc(1, sizeof *t)) == NULL || napi_set_instance_data(env, t, slots_finalize, NULL) != napi_ok) {
      free(t);
      napi_throw_error(env, NULL, "wkcrypto: out of memory");
      return NULL;
    }
  }
  if (slot >= t->count) {
    if (s == NULL) return NULL;
    uint32_t count = t->count == 0 ? 64 : t->count;
    while (count <= slot) count *= 2;
    slot_t *grown = realloc(t->slots, count * sizeof *grown);
    if (grown == NULL) {
      napi_throw_error(env, NULL, "wkcrypto: out of memory");
      return NULL;
    }
    memset(grown + t->count, 0, (count - t->count) * sizeof *grown);
    t->slots = grown;
    t->count = count;
  }
  slot_t *e = &t->slots[slot];
  if (e->ref != NULL) napi_delete_reference(env, e->ref);
  memset(e, 0, sizeof *e);
  if (s == NULL) return NULL;
  CHECK(napi_create_reference(env, argv[1], 1, &e->ref));
  e->session = s;
  e->version = version;
  e->max_remaining = max_remaining;
  e->fd = fd;
  return NULL;
}

/* recvSlotStopWrites(slot) -> undefined: the slot's RECVACKs are handed back from now on (its socket may hold other writes). */
static napi_value js_recv_slot_stop_writes(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint32_t slot = 0;
  if (argc != 1 || napi_get_value_uint32(env, argv[0], &slot) != napi_ok) {
    napi_throw_type_error(env, NULL, "wkcrypto: recvSlotStopWrites(slot)");
    return NULL;
  }
  slots_t *t = slots_of(env);
  if (t != NULL && slot < t->count) t->slots[slot].fd = -1;
  return NULL;
}

/* The most RECVACK bytes of one read written here at once (more are handed back). */
#define ACKS_MAX 2048

/* The bytes a RECVACK frame takes at `version`: header (2), message id (8), seq (4 or 8). */
static size_t recvack_bytes(int version) { return 2 + 8 + (version <= 5 ? 4 : 8); }

/*
 * One read of a slot's socket, b[0, n): every frame in it verified and
 * decrypted into `out` (room bytes) as the records openRecvReads describes.
 * The bytes written, or 0 when the read is not all whole RECVs of the common
 * shape that verify and decrypt, or out has no room: the caller's reference
 * path then takes the whole read (it decides alike, and reports).
 */
static size_t open_read(slot_t *e, const unsigned char *b, size_t n, unsigned char *out, size_t room) {
  size_t ack_bytes = recvack_bytes(e->version);
  size_t w = 8, pos = 0;
  if (room < w) return 0;
  int32_t frames = 0;
  int32_t f[F_COUNT];
  while (pos < n) {
    if ((b[pos] >> 4) != TYPE_RECV) return 0;
    size_t value = 0, i = 1;
    for (;; i++) {
      if (i > 4 || pos + i >= n) return 0;
      value |= (size_t)(b[pos + i] & 0x7f) << (7 * (i - 1));
      if ((b[pos + i] & 0x80) == 0) break;
    }
    size_t start = pos + i + 1, end = start + value;
    if (value > e->max_remaining || end > n || scan_recv(b, start, end, e->version, f) != 0) return 0;
    size_t wire_len = end - (size_t)f[F_PAYLOAD_AT];
    if (room - w < 4 + align4(ack_bytes) + wire_len / 4 * 3 + 3) return 0;
    unsigned char *ack = out + w + 4;
    ack[0] = TYPE_RECVACK << 4;
    ack[1] = (unsigned char)(ack_bytes - 2);
    memcpy(ack + 2, b + f[F_MESSAGE_ID_AT], ack_bytes - 2);
    unsigned char *plain = ack + align4(ack_bytes);
    long got = recv_open(e->session, b, f, plain);
    if (got < 0) return 0;
    int32_t len = (int32_t)got;
    memcpy(out + w, &len, 4);
    w += 4 + align4(ack_bytes) + align4((size_t)got);
    frames++;
    pos = end;
  }
  memcpy(out, &frames, 4);
  int32_t written = 0;
  /* The read's RECVACKs in one write to the socket, when the slot has one (nothing else is queued for it: the caller says so). */
  unsigned char acks[ACKS_MAX];
  if (e->fd >= 0 && (size_t)frames * ack_bytes <= sizeof acks) {
    size_t len = 0;
    for (size_t r = 8; r < w; len += ack_bytes) {
      int32_t plain_len;
      memcpy(&plain_len, out + r, 4);
      memcpy(acks + len, out + r + 4, ack_bytes);
      r += 4 + align4(ack_bytes) + align4((size_t)plain_len);
    }
    ssize_t sent = send(e->fd, acks, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    written = sent > 0 ? (int32_t)sent : 0;
    /* What the kernel did not take is handed back, to be queued; later RECVACKs queue behind it. */
    if ((size_t)written != len) e->fd = -1;
  }
  memcpy(out + 4, &written, 4);
  return w;
}

/*
 * openRecvReads(batch, reads: Int32Array, k, out) -> number
 * A client's in-place RECV path for many sockets' reads in one call: read i
 * of `k` is batch[reads[3i + 1], + reads[3i + 2]) of the socket whose
 * session recvSlot named reads[3i]. For each read, in order, `out` receives
 * an int32 count of frames (little-endian, as every int32 here), the bytes of
 * its RECVACKs written to the slot's socket here (all of them, or the first
 * ones the kernel took: the rest are the caller's to write; 0 without a
 * socket), then per frame its plaintext's length, its RECVACK frame (padded
 * to 4) and its plaintext (padded to 4). A count of 0 (and nothing more)
 * declines the read: it is not all whole, encrypted RECVs of the common
 * shape that verify and decrypt, its slot is empty, or `out` had no room;
 * the caller reads it on its reference path. Returns the bytes of `out`
 * written. Throws a RangeError when a read lies outside the batch, `k` reads
 * exceed `reads`, or `out` overlaps the batch or cannot hold a count a read.
 */
static napi_value js_open_recv_reads(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  unsigned char *batch, *out;
  size_t batch_len, out_len, count = 0;
  uint32_t k = 0;
  napi_typedarray_type type = napi_uint8_array;
  void *data = NULL;
  if (argc != 4 || bytes_of(env, argv[0], &batch, &batch_len) ||
      napi_get_typedarray_info(env, argv[1], &type, &count, &data, NULL, NULL) != napi_ok || type != napi_int32_array ||
      napi_get_value_uint32(env, argv[2], &k) != napi_ok || bytes_of(env, argv[3], &out, &out_len)) {
    napi_throw_type_error(env, NULL, "wkcrypto: openRecvReads(batch, reads: Int32Array, k, out)");
    return NULL;
  }
  const int32_t *reads = data;
  if ((uint64_t)k * 3 > count) {
    napi_throw_range_error(env, NULL, "wkcrypto: openRecvReads: k reads exceed the reads array");
    return NULL;
  }
  for (uint32_t i = 0; i < k; i++)
    if (!within(reads[3 * i + 1], reads[3 * i + 2], batch_len) || reads[3 * i] < 0) {
      napi_throw_range_error(env, NULL, "wkcrypto: openRecvReads: a read lies outside the batch");
      return NULL;
    }
  if (out < batch + batch_len && batch < out + out_len) {
    napi_throw_range_error(env, NULL, "wkcrypto: openRecvReads: out overlaps the batch");
    return NULL;
  }
  slots_t *t = slots_of(env);
  size_t w = 0;
  for (uint32_t i = 0; i < k; i++) {
    if (out_len - w < 4) {
      napi_throw_range_error(env, NULL, "wkcrypto: openRecvReads: out cannot hold a count for every read");
      return NULL;
    }
    uint32_t slot = (uint32_t)reads[3 * i];
    slot_t *e = t != NULL && slot < t->count && t->slots[slot].session != NULL ? &t->slots[slot] : NULL;
    size_t got = e == NULL || reads[3 * i + 2] == 0 ? 0 : open_read(e, batch + reads[3 * i + 1], (size_t)reads[3 * i + 2], out + w, out_len - w);
    if (got == 0) {
      memset(out + w, 0, 4);
      got = 4;
    }
    w += got;
  }
  napi_value result;
  CHECK(napi_create_uint32(env, (uint32_t)w, &result));
  return result;
}

/* A fresh X25519 key: its random scalar into `scalar`, its raw public key into `pub`. NULL when OpenSSL fails. */
static EVP_PKEY *x25519_new(unsigned char scalar[32], unsigned char pub[32]) {
  size_t pub_len = 32;
  EVP_PKEY *key = NULL;
  if (RAND_bytes(scalar, 32) != 1 || (key = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, scalar, 32)) == NULL ||
      EVP_PKEY_get_raw_public_key(key, pub, &pub_len) != 1 || pub_len != 32) {
    EVP_PKEY_free(key);
    ERR_clear_error();
    return NULL;
  }
  return key;
}

/* x25519KeyPair(out: Uint8Array(64)) -> undefined: a fresh key's private scalar into out[0, 32), its public key into out[32, 64). */
static napi_value js_x25519_key_pair(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  unsigned char *out;
  size_t out_len;
  if (argc != 1 || bytes_of(env, argv[0], &out, &out_len) || out_len != 64) {
    napi_throw_type_error(env, NULL, "wkcrypto: x25519KeyPair(out) takes a 64-byte Uint8Array");
    return NULL;
  }
  EVP_PKEY *key = x25519_new(out, out + 32);
  if (key == NULL) {
    OPENSSL_cleanse(out, 64);
    napi_throw_error(env, NULL, "wkcrypto: X25519 key generation failed");
    return NULL;
  }
  EVP_PKEY_free(key);
  return NULL;
}

/*
 * x25519Exchange(peer: Uint8Array(32), out: Uint8Array(64)) -> 0 | -1
 * The server's side of a CONNECT's key exchange: a fresh X25519 key pair whose
 * public key goes to out[0, 32) and whose shared secret with `peer` (the
 * client's raw public key) goes to out[32, 64). -1 when OpenSSL refuses the
 * peer's key (a low-order point, whose secret would be all zeros). The
 * private key never leaves this call.
 */
static napi_value js_x25519_exchange(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  unsigned char *peer, *out;
  size_t peer_len, out_len;
  if (argc != 2 || bytes_of(env, argv[0], &peer, &peer_len) || bytes_of(env, argv[1], &out, &out_len) || peer_len != 32 || out_len != 64) {
    napi_throw_type_error(env, NULL, "wkcrypto: x25519Exchange(peer, out) takes a 32-byte and a 64-byte Uint8Array");
    return NULL;
  }
  unsigned char scalar[32];
  EVP_PKEY *mine = x25519_new(scalar, out);
  OPENSSL_cleanse(scalar, sizeof scalar);
  if (mine == NULL) {
    napi_throw_error(env, NULL, "wkcrypto: X25519 key generation failed");
    return NULL;
  }
  int status = -1;
  size_t secret_len = 32;
  EVP_PKEY *theirs = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, peer, 32);
  EVP_PKEY_CTX *derive = theirs == NULL ? NULL : EVP_PKEY_CTX_new(mine, NULL);
  if (derive != NULL && EVP_PKEY_derive_init(derive) == 1 && EVP_PKEY_derive_set_peer(derive, theirs) == 1 &&
      EVP_PKEY_derive(derive, out + 32, &secret_len) == 1 && secret_len == 32)
    status = 0;
  EVP_PKEY_CTX_free(derive);
  EVP_PKEY_free(theirs);
  EVP_PKEY_free(mine);
  /* A refused key leaves OpenSSL's errors on this thread's queue, which Node's own crypto shares. */
  if (status != 0) {
    OPENSSL_cleanse(out + 32, 32);
    ERR_clear_error();
  }
  napi_value result;
  CHECK(napi_create_int32(env, status, &result));
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  for (int v = 0; v < 4096; v++) {
    B64_PAIRS[v][0] = (unsigned char)B64[v >> 6];
    B64_PAIRS[v][1] = (unsigned char)B64[v & 63];
  }
  memset(B64_VALUES, -1, sizeof B64_VALUES);
  for (int v = 0; v < 64; v++) B64_VALUES[(unsigned char)B64[v]] = (signed char)v;
#ifdef B64_SIMD
  __builtin_cpu_init();
  b64_ssse3 = __builtin_cpu_supports("ssse3");
#endif
  napi_property_descriptor props[] = {
      {"session", NULL, js_session, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sealRecv", NULL, js_seal_recv, NULL, NULL, NULL, napi_enumerable, NULL},
      {"openSend", NULL, js_open_send, NULL, NULL, NULL, napi_enumerable, NULL},
      {"openRecv", NULL, js_open_recv, NULL, NULL, NULL, napi_enumerable, NULL},
      {"recvSlot", NULL, js_recv_slot, NULL, NULL, NULL, napi_enumerable, NULL},
      {"recvSlotStopWrites", NULL, js_recv_slot_stop_writes, NULL, NULL, NULL, napi_enumerable, NULL},
      {"openRecvReads", NULL, js_open_recv_reads, NULL, NULL, NULL, napi_enumerable, NULL},
      {"x25519KeyPair", NULL, js_x25519_key_pair, NULL, NULL, NULL, napi_enumerable, NULL},
      {"x25519Exchange", NULL, js_x25519_exchange, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof props[0], props) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
