/**
 * WKProto decoder fuzzer shared by the bounded Vitest run and the long
 * `npm run fuzz` script. Frames are random bytes, mutated valid frames and
 * valid frames, concatenated per simulated connection and fed in random
 * chunks. Invariants checked on every push:
 * - the only error ever thrown is a WkprotoDecodeError (anything else = crash);
 * - the decoder never holds more than maxRemainingLength + 5 bytes;
 * - a valid frame decodes and re-encodes to the same bytes.
 */
import { MAX_HEADER_BYTES } from '../src/wkproto/constants.ts';
import { decodePacket } from '../src/wkproto/decode.ts';
import { encodePacket } from '../src/wkproto/encode.ts';
import { WkprotoDecodeError } from '../src/wkproto/errors.ts';
import { WkprotoDecoder } from '../src/wkproto/stream-decoder.ts';
import { corpusFrames, prng } from './wkproto-corpus.ts';

/** Totals of one fuzz run. */
export interface FuzzStats {
  frames: number;
  packets: number;
  connections: number;
  errors: Record<string, number>;
  maxBuffered: number;
}

/** Runs `frames` fuzz frames from `seed`; throws on the first broken invariant. */
export function runFuzz(seed: number, frames: number, maxRemainingLength = 65_536): FuzzStats {
  const rnd = prng(seed);
  const int = (n: number): number => Math.floor(rnd() * n);
  const corpus = [1, 2, 3, 4, 5, 6].map((v) => ({ v, frames: corpusFrames(v, false) }));
  const stats: FuzzStats = { frames: 0, packets: 0, connections: 0, errors: {}, maxBuffered: 0 };
  const bound = maxRemainingLength + MAX_HEADER_BYTES;

  const randomBytes = (n: number): Buffer => {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = int(256);
    return b;
  };

  const mutate = (frame: Buffer): Buffer => {
    let b = Buffer.from(frame);
    for (let m = 1 + int(4); m > 0; m--) {
      const at = int(b.length);
      switch (int(6)) {
        case 0:
          b[at] = (b[at] ?? 0) ^ (1 << int(8));
          break;
        case 1:
          b[at] = int(256);
          break;
        case 2:
          b = b.subarray(0, at);
          break;
        case 3:
          b = Buffer.concat([b.subarray(0, at), randomBytes(1 + int(8)), b.subarray(at)]);
          break;
        case 4:
          if (b.length > 1) b[1] = 0x80 | int(128);
          break;
        default:
          b = Buffer.concat([b, b.subarray(at)]);
          break;
      }
    }
    return b;
  };

  /** A header declaring up to 1.25× the limit, followed by part of such a body: probes the buffering bound. */
  const bigFrame = (): Buffer => {
    const declared = int(Math.floor(maxRemainingLength * 1.25));
    const header = Buffer.alloc(5);
    header[0] = ((1 + int(12)) << 4) | int(16);
    let pos = 1;
    let rest = declared;
    do {
      header[pos++] = (rest & 0x7f) | (rest > 0x7f ? 0x80 : 0);
      rest >>>= 7;
    } while (rest > 0);
    return Buffer.concat([header.subarray(0, pos), Buffer.alloc(int(declared + 1), int(256))]);
  };

  const fail = (why: string, input: Buffer): never => {
    throw new Error(`fuzz invariant broken (${why}) at frame ${stats.frames}, seed ${seed}: ${input.toString('hex').slice(0, 200)}`);
  };

  const countError = (e: unknown, input: Buffer): void => {
    if (!(e instanceof WkprotoDecodeError)) fail(`non-decode error ${String(e)}`, input);
    const code = (e as WkprotoDecodeError).code;
    stats.errors[code] = (stats.errors[code] ?? 0) + 1;
  };

  while (stats.frames < frames) {
    stats.connections++;
    const { v, frames: valid } = corpus[int(corpus.length)]!;
    const decoder = new WkprotoDecoder({ version: v, maxRemainingLength });
    const parts: Buffer[] = [];
    for (let n = 1 + int(12); n > 0 && stats.frames < frames; n--, stats.frames++) {
      const pick = int(10);
      const base = valid[int(valid.length)]!;
      if (pick === 0) parts.push(randomBytes(int(rnd() < 0.5 ? 16 : 600)));
      else if (pick < 4) parts.push(mutate(base));
      else if (pick === 4) parts.push(bigFrame());
      else {
        parts.push(base);
        const back = decodePacket(base, v);
        if (!encodePacket(back, v).equals(base)) fail('valid frame did not round-trip', base);
      }
    }
    const stream = Buffer.concat(parts);
    try {
      for (let pos = 0; pos < stream.length;) {
        const take = 1 + int(int(2) === 0 ? 7 : 400);
        decoder.push(stream.subarray(pos, pos + take), () => stats.packets++);
        pos += take;
        if (decoder.bufferedBytes > bound) fail(`buffered ${decoder.bufferedBytes} > ${bound}`, stream);
        stats.maxBuffered = Math.max(stats.maxBuffered, decoder.bufferedBytes);
      }
    } catch (e) {
      countError(e, stream);
    }
    try {
      decodePacket(parts[0] ?? Buffer.alloc(0), v, maxRemainingLength);
    } catch (e) {
      countError(e, parts[0] ?? Buffer.alloc(0));
    }
  }
  return stats;
}
