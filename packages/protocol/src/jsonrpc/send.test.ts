import { describe, expect, it } from 'vitest';
import { decodeJsonRpc, type JsonRpcFrame } from './frame.ts';
import { readSendParams } from './params.ts';
import { compactSend, type CompactSend } from './send.ts';

/** What the full path makes of a frame: the send's id and params, or undefined when it is not an accepted send. */
function slowPath(text: string): CompactSend | undefined {
  let frame: JsonRpcFrame;
  try {
    frame = decodeJsonRpc(text);
  } catch {
    return undefined;
  }
  if (frame.kind !== 'request' || frame.method !== 'send') return undefined;
  try {
    return { id: frame.id, params: readSendParams(frame.params) };
  } catch {
    return undefined;
  }
}

/** Both paths' results with the payload bytes as plain arrays (a Buffer and a Uint8Array compare by contents). */
const plain = (s: CompactSend | undefined) => s && { ...s, params: { ...s.params, payload: [...s.params.payload] } };

/** The bench generator's send (apps/bench's JSON-RPC driver). */
const bench = (id: number, body: string, to = 'u2'): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    method: 'send',
    id,
    params: { clientMsgNo: `u1-${id}`, channelId: to, channelType: 1, payload: { b: body } },
  });

/** What the EasySDK-style client of the server tests writes: no jsonrpc member, id last, Base64 payload, a header. */
const sdk = (id: string, payload: object, header: object = { redDot: true }): string =>
  JSON.stringify({
    method: 'send',
    params: {
      clientMsgNo: '5f0c6f1e-2b1f-4a43-9b07-1d2d3c4b5a69',
      channelId: 'group-7',
      channelType: 2,
      payload: Buffer.from(JSON.stringify(payload)).toString('base64'),
      header,
    },
    id,
  });

const VALID = [
  bench(1, 'u1:u2|1|1234.567|xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'),
  bench(0, ''),
  bench(999999999999999, 'a}b{c'.replace(/[{}]/g, '-'), 'x'.repeat(1024)),
  bench(7, 'héllo wörld ✓ ~ \x7f'),
  sdk('r1', { type: 1, content: 'hello' }),
  sdk('a', { content: 'x' }, {}),
  sdk('req-42', {}, { redDot: false }),
  '{"jsonrpc":"2.0","method":"send","params":{"clientMsgNo":"","channelId":"","channelType":0,"payload":{}},"id":3}',
  '{"method":"send","id":"x","params":{"clientMsgNo":"c","channelId":"d","channelType":255,"payload":{"a":1,"b":-2,"c":true,"d":false,"e":null,"f":"s","$g":"","_h":123456789012345}}}',
  '{"method":"send","id":5,"params":{"clientMsgNo":"c","channelId":"d","channelType":1,"payload":"QUJD"}}',
  '{"method":"send","id":5,"params":{"clientMsgNo":"c","channelId":"d","channelType":1,"payload":"QUI="}}',
  '{"method":"send","id":5,"params":{"clientMsgNo":"c","channelId":"d","channelType":1,"payload":"QQ=="}}',
  '{"method":"send","id":5,"params":{"clientMsgNo":"c","channelId":"d","channelType":1,"payload":"+/+/"}}',
  '{"method":"send","id":5,"params":{"clientMsgNo":"\u2028\ud800","channelId":"d","channelType":1,"payload":{"k":"\u2028 ÿ"}}}',
];

describe('compactSend', () => {
  it('reads the compact forms exactly as the full decoder and params reader do', () => {
    for (const text of VALID) {
      const fast = compactSend(text);
      expect(fast, text).toBeDefined();
      expect(plain(fast), text).toEqual(plain(slowPath(text)));
    }
  });

  it('gives the bench send its payload text and bytes, and the SDK send its Base64 bytes', () => {
    const b = compactSend(bench(12, 'body'))!;
    expect(b.id).toBe(12);
    expect(b.params.payloadJson).toBe('{"b":"body"}');
    expect(Buffer.from(b.params.payload).toString()).toBe('{"b":"body"}');
    const s = compactSend(sdk('r9', { type: 1 }))!;
    expect(s.id).toBe('r9');
    expect(s.params.header.redDot).toBe(true);
    expect(s.params.payloadJson).toBeUndefined();
    expect(Buffer.from(s.params.payload).toString()).toBe('{"type":1}');
  });

  it('leaves every other frame to the full decoder', () => {
    const base =
      '{"jsonrpc":"2.0","method":"send","id":1,"params":{"clientMsgNo":"c","channelId":"d","channelType":1,"payload":{"b":"x"}}}';
    expect(compactSend(base)).toBeDefined();
    for (const text of [
      base.replace('"id":1,', ''), // a notification
      base.replace('}}', '},"id":2}}').replace(/}}$/, '}'), // malformed
      base.slice(0, -1) + ',"id":2}', // two ids: the last counts
      base.replace('"id":1', '"id":01'),
      base.replace('"id":1', '"id":-1'),
      base.replace('"id":1', '"id":1234567890123456'),
      base.replace('"id":1', '"id":""'),
      base.replace('"channelType":1', '"channelType":256'),
      base.replace('"channelType":1', '"channelType":01'),
      base.replace('"c"', `"${'c'.repeat(1025)}"`), // over the schema's 1024
      base.replace('"d"', '"a\\"b"'), // an escape
      base.replace('"x"', '"\\u0041"'),
      base.replace('"x"', '"\ud83d\ude00"'), // a surrogate pair: left to JSON.stringify
      base.replace('{"b":"x"}', '{"b":"x","b":"y"}'), // duplicate key: the last counts
      base.replace('{"b":"x"}', '{"1":"x","b":"y"}'), // an index key: written first by JSON.stringify
      base.replace('{"b":"x"}', '{"b":-0}'),
      base.replace('{"b":"x"}', '{"b":1.0}'),
      base.replace('{"b":"x"}', '{"b":{"c":1}}'),
      base.replace('{"b":"x"}', '{"b":[1]}'),
      base.replace('{"b":"x"}', '{"b":"}"}'),
      base.replace('{"b":"x"}', '[]'),
      base.replace('{"b":"x"}', '"1234"'), // Base64 that is JSON text
      base.replace('{"b":"x"}', '"true"'),
      base.replace('{"b":"x"}', '"null"'),
      base.replace('{"b":"x"}', '""'),
      base.replace('{"b":"x"}', '"QUJ"'), // not Base64
      base.replace('{"b":"x"}', '"Q==="'),
      base.replace('{"b":"x"}', 'null'),
      base.replace('"payload":{"b":"x"}', '"payload":{"b":"x"},"header":{"noPersist":true}'),
      base.replace('"payload":{"b":"x"}', '"payload":{"b":"x"},"header":null'),
      base.replace('"clientMsgNo"', '"client_msg_no"'),
      base.replace('"method":"send"', '"method":"sendx"'),
      base.replace('"2.0"', '"1.0"'),
      base.replace(',"params"', ', "params"'),
      base + ' ',
      '',
    ]) {
      expect(compactSend(text), text).toBeUndefined();
    }
  });

  it('never accepts a frame the full path would refuse or read differently', () => {
    // Every single-character replacement, deletion and insertion at every position.
    const chars = ['0', '1', '9', '"', '{', '}', '[', ',', ':', ' ', 'a', 'Q', '=', '-', '\\', '/', '+', '\u0000', 'é', '\ud800'];
    let accepted = 0;
    for (const base of [VALID[0]!, VALID[4]!, VALID[8]!, VALID[12]!]) {
      const mutations: string[] = [];
      for (let i = 0; i <= base.length; i++) {
        if (i < base.length) mutations.push(base.slice(0, i) + base.slice(i + 1));
        for (const c of chars) {
          mutations.push(base.slice(0, i) + c + base.slice(i));
          if (i < base.length) mutations.push(base.slice(0, i) + c + base.slice(i + 1));
        }
      }
      for (const text of mutations) {
        const fast = compactSend(text);
        if (fast === undefined) continue;
        accepted++;
        expect(plain(fast), text).toEqual(plain(slowPath(text)));
      }
    }
    expect(accepted).toBeGreaterThan(1000);
  });
});
