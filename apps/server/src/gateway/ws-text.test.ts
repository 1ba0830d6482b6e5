import { describe, expect, it } from 'vitest';
import type { EventEmitter } from 'node:events';
import * as wsModule from 'ws';
import { asciiTextFramesOf, MAX_TEXT_BYTES } from './ws-text.ts';
import { clientFrame, send } from '../../test/ws-client-frames.ts';

/** ws's frame parser (exported by ws, not declared by its types). */
const { Receiver } = wsModule as unknown as {
  Receiver: new (o: { isServer: boolean; maxPayload: number }) => EventEmitter & { write(chunk: Buffer): boolean };
};

/** What ws's own receiver (server side) emits for `chunk`. */
function wsMessages(chunk: Buffer, maxPayload = 0): string[] {
  const out: string[] = [];
  const r = new Receiver({ isServer: true, maxPayload });
  r.on('message', (data: Buffer, isBinary: boolean) => out.push(`${isBinary ? 'bin' : 'text'}:${data.toString('utf8')}`));
  r.on('error', () => undefined);
  r.write(chunk);
  // ws fails a frame over the limit at once (its 'error' event follows on the next tick).
  if ((r as unknown as { _errored: boolean })._errored) out.push('error');
  return out;
}

describe('asciiTextFramesOf', () => {
  it('reads the texts ws reads from chunks of whole ASCII text frames (7- and 16-bit lengths, any mask)', () => {
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const frames: Buffer[] = [];
      const count = 1 + rand(5);
      for (let f = 0; f < count; f++) {
        const len = 1 + rand(f === 0 ? 700 : 130);
        let text = '';
        for (let i = 0; i < len; i++) text += String.fromCharCode(0x20 + rand(0x5f));
        frames.push(clientFrame(text, 1, true, [rand(256), rand(256), rand(256), rand(256)]));
      }
      const chunk = Buffer.concat(frames);
      const texts = asciiTextFramesOf(chunk, 0);
      expect(texts?.map((t) => `text:${t}`)).toEqual(wsMessages(chunk));
      // The same frames at an odd offset of a larger buffer, read through its DataView (from
      // `frames`: ws's receiver above unmasked `chunk` in place).
      const at = 1 + 2 * rand(8);
      const big = Buffer.concat([Buffer.alloc(at, 0xff), ...frames, Buffer.alloc(3, 0xee)]);
      const view = new DataView(big.buffer, big.byteOffset, big.length);
      expect(asciiTextFramesOf(big, 0, at, at + chunk.length, view)).toEqual(texts);
    }
  });

  it('reads only its range of a larger buffer, whatever lies around it', () => {
    const frames = Buffer.concat([clientFrame(send(1)), clientFrame(send(140), 1, true, [1, 2, 3, 4])]);
    const around = Buffer.concat([clientFrame('\u00e9'), Buffer.from([0x81, 0xff]), frames, Buffer.from([0x82, 0x80, 0xff])]);
    const start = around.length - frames.length - 3;
    expect(asciiTextFramesOf(around, 0, start, start + frames.length)).toEqual([send(1), send(140)]);
    const view = new DataView(around.buffer, around.byteOffset, around.length);
    expect(asciiTextFramesOf(around, 0, start, start + frames.length, view)).toEqual([send(1), send(140)]);
    // Not ASCII in any byte of a word or of the tail, read either way.
    for (const text of ['{"b":"\u00e9"}', 'é234567', '1234567é', '\u0080']) {
      const f = clientFrame(text, 1, true, [9, 8, 7, 6]);
      expect(asciiTextFramesOf(f, 0)).toBeUndefined();
      expect(asciiTextFramesOf(f, 0, 0, f.length, new DataView(f.buffer, f.byteOffset, f.length))).toBeUndefined();
    }
    // A range that cuts the last frame takes nothing, though the bytes after it would complete it.
    expect(asciiTextFramesOf(around, 0, start, start + frames.length - 1)).toBeUndefined();
    expect(asciiTextFramesOf(around, 0)).toBeUndefined();
  });

  it('takes nothing from a chunk with anything else in it', () => {
    const ok = clientFrame(send(1));
    for (const chunk of [
      Buffer.concat([ok, clientFrame('{"b":"é"}')]), // non-ASCII: ws validates and decodes UTF-8
      Buffer.concat([clientFrame('x', 9), ok]), // a ping frame
      Buffer.concat([ok, ok.subarray(0, 10)]), // a frame cut short
      Buffer.concat([ok, ok.subarray(0, 3)]), // a header cut short
      clientFrame(send(2), 1, false), // a fragment
      clientFrame(send(2), 2), // binary
      clientFrame(''), // empty
      clientFrame('y'.repeat(MAX_TEXT_BYTES + 1)), // longer than this path reads
      clientFrame('z'.repeat(70_000)), // a 64-bit length
      Buffer.from(clientFrame(send(300))).fill(0, 2, 4), // a 16-bit length of 0
      Buffer.from(clientFrame('a')).fill(0x01, 1, 2), // unmasked
      Buffer.from(ok).fill(0xc1, 0, 1), // RSV1 set
      Buffer.alloc(0),
    ]) {
      expect(asciiTextFramesOf(chunk, 0)).toBeUndefined();
    }
    expect(asciiTextFramesOf(ok, 50)).toBeUndefined(); // over the frame limit: ws must refuse it
    expect(wsMessages(ok, 50)).toEqual(['error']);
  });
});
