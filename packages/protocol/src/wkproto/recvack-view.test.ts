import { describe, expect, it } from 'vitest';
import { PacketType } from './constants.ts';
import { decodeBody } from './decode.ts';
import { encodePacket, encodeRecvack } from './encode.ts';
import { WkprotoDecodeError } from './errors.ts';
import { checkRecvackBody, recvackMessageIdText } from './recvack-view.ts';
import { WkprotoDecoder } from './stream-decoder.ts';
import type { WkPacket } from './types.ts';

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

/** Ids around every decimal and 32-bit boundary, both signs, and some pseudo-random ones. */
function ids(): bigint[] {
  const out = [0n, 1n, -1n, I64_MIN, I64_MIN + 1n, I64_MAX, I64_MAX - 1n, 2n ** 32n, 2n ** 32n - 1n, 2n ** 32n + 1n, -(2n ** 32n)];
  for (let k = 1n; k <= 18n; k++) for (const d of [-1n, 0n, 1n]) out.push(10n ** k + d, -(10n ** k + d));
  let x = 0x9e3779b97f4a7c15n;
  for (let i = 0; i < 200; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & (2n ** 64n - 1n);
    out.push(BigInt.asIntN(64, x));
  }
  return out;
}

describe('recvackMessageIdText', () => {
  it('gives the decimal text of the id the reference decoder reads, at every version', () => {
    for (const version of [2, 3, 4, 5, 6]) {
      for (const id of ids()) {
        const frame = encodeRecvack(id, 7n, version);
        const body = Buffer.concat([Buffer.from('xx'), frame.subarray(2), Buffer.from('yy')]);
        const ref = decodeBody(PacketType.RECVACK, 0, frame, 2, frame.length, version) as { messageId: bigint };
        expect(recvackMessageIdText(body, 2, body.length - 2, version), `v${version} ${id}`).toBe(ref.messageId.toString());
      }
    }
  });

  it('refuses a body too short for the id and the seq, as the reference decoder does', () => {
    for (const [version, n] of [
      [5, 0],
      [5, 7],
      [5, 11],
      [6, 8],
      [6, 15],
    ] as const) {
      const body = Buffer.alloc(n);
      expect(() => decodeBody(PacketType.RECVACK, 0, body, 0, n, version)).toThrow(WkprotoDecodeError);
      expect(() => recvackMessageIdText(body, 0, n, version)).toThrow(/TRUNCATED/);
    }
    expect(recvackMessageIdText(Buffer.alloc(12), 0, 12, 5)).toBe('0');
  });
});

describe('WkprotoDecoder.onRecvackBody', () => {
  it('takes RECVACK bodies in stream order, across chunk splits, and decodes every other packet', () => {
    const version = 6;
    const frames = [
      encodeRecvack(11n, 1n, version),
      encodePacket({ type: PacketType.PING }, version),
      encodeRecvack(-12n, 2n, version),
      encodePacket({ type: PacketType.DISCONNECT, reasonCode: 3, reason: 'bye' }, version),
      encodeRecvack(I64_MAX, 3n, version),
    ];
    const stream = Buffer.concat(frames);
    for (let split = 1; split < stream.length; split++) {
      const d = new WkprotoDecoder({ version });
      const seen: string[] = [];
      d.onRecvackBody = (buf, start, end, flags) => seen.push(`ack ${recvackMessageIdText(buf, start, end, version)} ${flags}`);
      const onPacket = (p: WkPacket) => seen.push(`packet ${p.type}`);
      d.push(stream.subarray(0, split), onPacket);
      d.push(stream.subarray(split), onPacket);
      expect(seen, `split ${split}`).toEqual([
        'ack 11 0',
        `packet ${PacketType.PING}`,
        'ack -12 0',
        `packet ${PacketType.DISCONNECT}`,
        `ack ${I64_MAX} 0`,
      ]);
    }
  });

  it('fails the decoder when the handler throws on a truncated RECVACK', () => {
    const d = new WkprotoDecoder({ version: 5 });
    d.onRecvackBody = (buf, start, end) => recvackMessageIdText(buf, start, end, 5);
    const truncated = Buffer.from([PacketType.RECVACK << 4, 4, 0, 0, 0, 1]);
    expect(() => d.push(truncated, () => undefined)).toThrow(/TRUNCATED/);
    expect(d.error).toBeInstanceOf(WkprotoDecodeError);
  });
});

describe('checkRecvackBody', () => {
  it('throws exactly where recvackMessageIdText does', () => {
    for (const version of [3, 5, 6]) {
      for (let n = 0; n <= 17; n++) {
        const body = Buffer.alloc(n + 2);
        let ref: unknown;
        try {
          recvackMessageIdText(body, 1, 1 + n, version);
        } catch (err) {
          ref = err;
        }
        if (ref === undefined) expect(() => checkRecvackBody(1, 1 + n, version)).not.toThrow();
        else expect(() => checkRecvackBody(1, 1 + n, version)).toThrow((ref as Error).message);
      }
    }
  });
});
