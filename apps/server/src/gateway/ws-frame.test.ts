import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { wsAsciiTextFrame, wsTextFrame } from './ws-frame.ts';

/** ws's own framer (exported by the package, not by its type declarations). */
const { Sender } = createRequire(import.meta.url)('ws') as {
  Sender: { frame(data: Buffer, options: Record<string, unknown>): Buffer[] };
};

/** What ws itself writes for a server's unmasked text message. */
function wsFrame(text: string): Buffer {
  const data = Buffer.from(text, 'utf8');
  return Buffer.concat(Sender.frame(data, { fin: true, opcode: 1, mask: false, readOnly: false, rsv1: false }));
}

describe('wsTextFrame', () => {
  it('writes the bytes ws writes, at every length-encoding boundary and for multi-byte text', () => {
    for (const n of [0, 1, 125, 126, 127, 65535, 65536, 70000]) {
      const text = 'x'.repeat(n);
      expect(wsTextFrame(text).equals(wsFrame(text))).toBe(true);
    }
    for (const text of ['é', '中文'.repeat(40), '😀'.repeat(40), '{"jsonrpc":"2.0"}']) {
      expect(wsTextFrame(text).equals(wsFrame(text))).toBe(true);
    }
  });

  it('frames ASCII text given as such to the same bytes', () => {
    for (const n of [0, 1, 125, 126, 127, 65535, 65536, 70000]) {
      const text = '7'.repeat(n);
      expect(wsAsciiTextFrame(text).equals(wsFrame(text))).toBe(true);
    }
    const result = '{"jsonrpc":"2.0","id":17,"result":{"messageId":"2124331629039063041","messageSeq":3,"reasonCode":1}}';
    expect(wsAsciiTextFrame(result).equals(wsFrame(result))).toBe(true);
  });
});
