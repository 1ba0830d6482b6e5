import { describe, expect, it } from 'vitest';
import { compactRecvackMessageId } from '@parley/protocol/jsonrpc';
import { ackIdKey, ackIdMatches, ackIdText, compactRecvacksOf } from './ws-recvack.ts';
import { clientFrame, recvack } from '../../test/ws-client-frames.ts';

/** The ids `compactRecvacksOf` reads from the whole of `chunk`, as strings; undefined when it takes nothing. */
function idsOf(chunk: Buffer, maxPayload: number): string[] | undefined {
  const count = compactRecvacksOf(chunk, 0, chunk.length, maxPayload);
  if (count === 0) return undefined;
  return Array.from({ length: count }, (_, k) => ackIdText(k));
}

describe('compactRecvacksOf', () => {
  it('reads every recvack of a chunk made only of whole compact recvacks, in order', () => {
    const chunk = Buffer.concat([
      clientFrame(recvack('1')),
      clientFrame(recvack('22'), 1, true, [0, 0, 0, 0]),
      clientFrame(recvack('333')),
    ]);
    expect(idsOf(chunk, 0)).toEqual(['1', '22', '333']);
  });

  it('takes nothing from a chunk with anything else in it', () => {
    const ack = clientFrame(recvack('1'));
    for (const chunk of [
      Buffer.concat([ack, clientFrame('{"jsonrpc":"2.0","method":"ping","id":1}')]),
      Buffer.concat([clientFrame('x', 9), ack]), // a ping frame
      Buffer.concat([ack, ack.subarray(0, 10)]), // a frame cut short
      clientFrame(recvack('1'), 1, false), // a fragment
      clientFrame(recvack('1'), 2), // binary
      Buffer.from(ack).fill(0x00, 1, 2), // unmasked
      Buffer.alloc(0),
    ]) {
      expect(idsOf(chunk, 0)).toBeUndefined();
    }
    expect(idsOf(ack, 50)).toBeUndefined(); // over the frame limit: ws must refuse it
  });
});

describe('compactRecvacksOf against compactRecvackMessageId', () => {
  const head = '{"jsonrpc":"2.0","method":"recvack","params":{"messageId":"';
  const texts = [
    recvack('1'),
    recvack('0'),
    recvack('18446744073709551615'),
    recvack('99999999999999999999'),
    recvack('123456789012345678901'), // 21 digits
    recvack(''),
    recvack('12a'),
    recvack('-1'),
    recvack(' 1'),
    `${head}7","messageSeq":0}}`,
    `${head}7","messageSeq":00}}`,
    `${head}7","messageSeq":01}}`,
    `${head}7","messageSeq":999999999999999}}`,
    `${head}7","messageSeq":1000000000000000}}`, // 16 digits
    `${head}7","messageSeq":-1}}`,
    `${head}7","messageSeq":1}}}`,
    `${head}7","messageSeq":1}`,
    `${head}7","messageSeq":1} }`,
    `${head}7","messageSeq":}}`,
    `${head}7", "messageSeq":1}}`,
    `${head}7","messageseq":1}}`,
    `${head.replace('recvack', 'recvacc')}7","messageSeq":1}}`,
    `${head.replace('2.0', '2.1')}7","messageSeq":1}}`,
    `${head.slice(0, -1)}7","messageSeq":1}}`,
    `${head}${'1'.repeat(20)}","messageSeq":${'9'.repeat(15)}}}`, // the longest
    `${head}7","messageSeq":1}}x`,
  ];
  it('takes exactly the frames the regular expression takes, with the same id, for every mask and length', () => {
    for (const text of texts) {
      for (const mask of [
        [0, 0, 0, 0],
        [0x12, 0x34, 0x56, 0x78],
        [0xff, 0x80, 0x01, 0x7f],
      ]) {
        const id = compactRecvackMessageId(text);
        const got = idsOf(clientFrame(text, 1, true, mask), 0);
        expect(got, text).toEqual(id === undefined ? undefined : [id]);
        // Two frames in one chunk, and a frame cut anywhere, as ws would see them.
        const twice = Buffer.concat([clientFrame(recvack('5'), 1, true, mask), clientFrame(text, 1, true, mask)]);
        expect(idsOf(twice, 0), text).toEqual(id === undefined ? undefined : ['5', id]);
      }
    }
  });

  it('agrees with the regular expression on every one-byte change of a recvack, masked or not', () => {
    const base = `${head}1234567890123456789","messageSeq":120}}`;
    const chars = ['0', '1', '9', '"', ',', ':', '{', '}', 'a', 'M', ' ', '\\', '/', '.', '-', '\u007f'];
    for (const mask of [
      [0, 0, 0, 0],
      [0x9a, 0x02, 0xff, 0x41],
    ]) {
      for (let i = 0; i < base.length; i++) {
        for (const c of chars) {
          const text = base.slice(0, i) + c + base.slice(i + 1);
          const id = compactRecvackMessageId(text);
          expect(idsOf(clientFrame(text, 1, true, mask), 0), text).toEqual(id === undefined ? undefined : [id]);
        }
        // One byte fewer.
        const shorter = base.slice(0, i) + base.slice(i + 1);
        const id = compactRecvackMessageId(shorter);
        expect(idsOf(clientFrame(shorter, 1, true, mask), 0), shorter).toEqual(id === undefined ? undefined : [id]);
      }
    }
  });

  it('reads only its range of a shared buffer, through the DataView it is given, whatever lies around it', () => {
    const frames = Buffer.concat([clientFrame(recvack('7')), clientFrame(recvack('12345678901234567890'), 1, true, [1, 2, 3, 4])]);
    for (const fill of [0x00, 0x30, 0xff]) {
      for (const start of [0, 1, 4, 1000]) {
        const shared = Buffer.alloc(4096, fill);
        const view = new DataView(shared.buffer, shared.byteOffset, shared.length);
        frames.copy(shared, start);
        const count = compactRecvacksOf(shared, start, start + frames.length, 0, view);
        expect(Array.from({ length: count }, (_, k) => ackIdText(k))).toEqual(['7', '12345678901234567890']);
        // The range cuts the second frame short, or starts inside the first: nothing is taken.
        expect(compactRecvacksOf(shared, start, start + frames.length - 1, 0, view)).toBe(0);
        expect(compactRecvacksOf(shared, start + 1, start + frames.length, 0, view)).toBe(0);
      }
      // The same frames ending at the buffer's very end (words are then read from a copy).
      const end = Buffer.alloc(frames.length + 1, fill);
      frames.copy(end, 1);
      const endView = new DataView(end.buffer, end.byteOffset, end.length);
      expect(compactRecvacksOf(end.subarray(1), 0, frames.length, 0)).toBe(2);
      expect(compactRecvacksOf(end, 1, end.length, 0, endView)).toBe(2);
      expect(compactRecvacksOf(end, 0, end.length, 0, endView)).toBe(0);
    }
  });

  it('matches an ack with an id exactly as the id text compares, at every length', () => {
    const ids = [
      '1',
      '12',
      '123',
      '1234',
      '12345',
      '123456',
      '1234567',
      '1234567890123456789',
      '18446744073709551615',
      '99999999999999999999',
    ];
    const others = [...ids, '0', '01', '2', '1234567890123456788', '2234567890123456789', '123456789012345678901', '', '12a'];
    for (const seq of ['0', '7', '123456789012345']) {
      const chunk = Buffer.concat(
        ids.map((id, i) => clientFrame(`${head}${id}","messageSeq":${seq}}}`, 1, true, [i, 0x5a, 0xa5, 0xff - i])),
      );
      expect(compactRecvacksOf(chunk, 0, chunk.length, 0)).toBe(ids.length);
      ids.forEach((id, slot) => {
        expect(ackIdText(slot)).toBe(id);
        for (const other of others) expect(ackIdMatches(slot, ackIdKey(other)), `${id} vs ${other}`).toBe(other === id);
      });
    }
  });

  it('takes no frame cut short, whatever the cut', () => {
    const frame = clientFrame(recvack('1234567890'));
    for (let cut = 1; cut < frame.length; cut++) expect(idsOf(frame.subarray(0, cut), 0)).toBeUndefined();
  });

  it('reads a frame at any offset of a shared read buffer', () => {
    const frame = clientFrame(recvack('42'));
    for (let offset = 0; offset < 8; offset++) {
      const pool = Buffer.alloc(offset + frame.length + 3, 0xaa);
      frame.copy(pool, offset);
      expect(idsOf(pool.subarray(offset, offset + frame.length), 0)).toEqual(['42']);
    }
  });
});
