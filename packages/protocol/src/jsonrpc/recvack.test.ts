import { describe, expect, it } from 'vitest';
import { decodeJsonRpc, type JsonRpcFrame } from './frame.ts';
import { readRecvackMessageId } from './params.ts';
import { compactRecvackMessageId } from './recvack.ts';

/** What the full path makes of a frame: the acked id, or undefined when it is not an accepted recvack. */
function slowPath(text: string): string | undefined {
  let frame: JsonRpcFrame;
  try {
    frame = decodeJsonRpc(text);
  } catch {
    return undefined;
  }
  if (frame.kind !== 'notification' || frame.method !== 'recvack') return undefined;
  try {
    return readRecvackMessageId(frame.params);
  } catch {
    return undefined;
  }
}

const compact = (id: string, seq: string): string =>
  `{"jsonrpc":"2.0","method":"recvack","params":{"messageId":"${id}","messageSeq":${seq}}}`;

describe('compactRecvackMessageId', () => {
  it('reads the compact form exactly as the full decoder and params check do', () => {
    for (const [id, seq] of [
      ['1', '0'],
      ['123456789012345678', '42'],
      ['18446744073709551615', '1'],
      ['99999999999999999999', '999999999999999'],
      ['0', '7'],
    ] as const) {
      const text = compact(id, seq);
      expect(compactRecvackMessageId(text)).toBe(id);
      expect(slowPath(text)).toBe(id);
    }
    // What the SDK client and the bench write.
    const sdk = JSON.stringify({ jsonrpc: '2.0', method: 'recvack', params: { messageId: '77', messageSeq: 3 } });
    expect(compactRecvackMessageId(sdk)).toBe('77');
  });

  it('leaves every other frame to the full decoder', () => {
    for (const text of [
      compact('1', '01'), // not JSON
      compact('1', '-1'), // refused by the schema
      compact('1', '1.5'),
      compact('1', '9007199254740993'), // past MAX_SAFE_INTEGER
      compact('123456789012345678901', '1'), // 21 digits
      compact('', '1'),
      compact('1a', '1'),
      compact('1', '1') + ' ',
      ' ' + compact('1', '1'),
      compact('1', '1').replace('"2.0"', '"1.0"'),
      compact('1', '1').replace('recvack', 'recv'),
      '{"jsonrpc":"2.0","method":"recvack","params":{"messageId":"1","messageSeq":1},"id":5}',
      '{"jsonrpc":"2.0","method":"recvack","params":{"header":{},"messageId":"1","messageSeq":1}}',
      '{"jsonrpc":"2.0","method":"recvack","params":{"messageSeq":1,"messageId":"1"}}',
      '{"jsonrpc": "2.0","method":"recvack","params":{"messageId":"1","messageSeq":1}}',
      '{"jsonrpc":"2.0","method":"send","id":1,"params":{}}',
      '',
    ]) {
      expect(compactRecvackMessageId(text), text).toBeUndefined();
    }
  });

  it('never accepts a frame the full path would refuse or read differently', () => {
    // Mutations of a valid compact frame: one character replaced at each position.
    const base = compact('1234567', '89');
    for (let i = 0; i < base.length; i++) {
      for (const c of ['0', '9', '"', '}', ' ', 'a', '-', '\\']) {
        const text = base.slice(0, i) + c + base.slice(i + 1);
        const fast = compactRecvackMessageId(text);
        if (fast !== undefined) expect(slowPath(text), text).toBe(fast);
      }
    }
  });
});
