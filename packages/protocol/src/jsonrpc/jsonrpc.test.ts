import { describe, expect, it } from 'vitest';
import {
  decodeJsonRpc,
  encodeError,
  encodeResult,
  encodeSendResult,
  jsonDepthExceeds,
  JsonRpcDecodeError,
  JsonRpcErrorCode,
  MAX_FRAME_DEPTH,
} from './frame.ts';
import { readConnectParams, readPayload, readRecvackMessageId, readRecvackParams, readSendParams, InvalidParamsError } from './params.ts';
import { encodeRecv, jsonString, recvPayloadJson } from './recv.ts';

function decodeError(text: string): JsonRpcDecodeError {
  try {
    decodeJsonRpc(text);
  } catch (err) {
    if (err instanceof JsonRpcDecodeError) return err;
    throw err;
  }
  throw new Error('expected a decode error');
}

describe('decodeJsonRpc', () => {
  it('tells requests, notifications and responses apart', () => {
    expect(decodeJsonRpc('{"jsonrpc":"2.0","method":"ping","id":"p1"}')).toEqual({
      kind: 'request',
      id: 'p1',
      method: 'ping',
      params: undefined,
    });
    expect(decodeJsonRpc('{"method":"recvack","params":{"messageId":"1"}}')).toMatchObject({ kind: 'notification' });
    expect(decodeJsonRpc('{"id":"x","result":null}')).toEqual({ kind: 'response', id: 'x', result: null });
  });

  it('rejects malformed frames with the JSON-RPC codes and keeps a readable id', () => {
    expect(decodeError('{nope').code).toBe(JsonRpcErrorCode.ParseError);
    expect(decodeError('[1,2]').code).toBe(JsonRpcErrorCode.InvalidRequest);
    const wrongVersion = decodeError('{"jsonrpc":"1.0","method":"ping","id":"a"}');
    expect(wrongVersion.code).toBe(JsonRpcErrorCode.InvalidRequest);
    expect(wrongVersion.id).toBe('a');
    expect(decodeError('{"id":""}').code).toBe(JsonRpcErrorCode.InvalidRequest);
    expect(decodeError('{"id":"a","result":1,"error":{"code":1,"message":"x"}}').code).toBe(JsonRpcErrorCode.InvalidRequest);
  });

  it('encodes responses with jsonrpc 2.0 and a null result for ping', () => {
    expect(JSON.parse(encodeResult('p1', null))).toEqual({ jsonrpc: '2.0', id: 'p1', result: null });
    expect(JSON.parse(encodeError(null, { code: -32700, message: 'bad' }))).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'bad' },
    });
  });
});

describe('params', () => {
  it('accepts both spellings of connect params', () => {
    const camel = readConnectParams({ uid: 'u', token: 't', deviceFlag: 1, deviceId: 'd', clientTimestamp: 5 });
    const snake = readConnectParams({ uid: 'u', token: 't', device_flag: 1, device_id: 'd', client_timestamp: 5 });
    expect(snake).toEqual(camel);
    expect(camel.deviceFlag).toBe(1);
    expect(readConnectParams({ uid: 'u', token: 't', deviceId: null }).deviceId).toBe('');
  });

  it('reads send params in both spellings, with header and setting bits', () => {
    const p = readSendParams({
      client_msg_no: 'c1',
      channel_id: 'g1',
      channel_type: 2,
      header: { red_dot: true, syncOnce: true },
      setting: { receipt: true, topic: true },
      payload: { type: 1, content: 'hi' },
    });
    expect(p.clientMsgNo).toBe('c1');
    expect(p.channelType).toBe(2);
    expect(p.header).toMatchObject({ redDot: true, syncOnce: true, noPersist: false });
    expect(p.setting).toBe(0x88);
    expect(Buffer.from(p.payload).toString()).toBe('{"type":1,"content":"hi"}');
  });

  it('takes a payload string as JSON text when it parses, else as Base64', () => {
    expect(Buffer.from(readPayload('{"a":1}')).toString()).toBe('{"a":1}');
    expect(Buffer.from(readPayload(Buffer.from('hello').toString('base64'))).toString()).toBe('hello');
    expect(Buffer.from(readPayload('1234')).toString()).toBe('1234');
    expect(readPayload(null).length).toBe(0);
    expect(() => readPayload('not base64!')).toThrow(InvalidParamsError);
    expect(() => readPayload(12)).toThrow(InvalidParamsError);
  });

  it('rejects wrong types with a message naming the field', () => {
    expect(() => readSendParams({ channelType: 'x' })).toThrow(/channelType/);
    expect(() => readSendParams({ header: { redDot: 1 } })).toThrow(/redDot/);
    expect(() => readConnectParams('x')).toThrow(/connect/);
    expect(() => readRecvackParams({ messageSeq: -1 })).toThrow(/messageSeq/);
  });

  it('readRecvackMessageId reads the id readRecvackParams reads and refuses what it refuses, with the same message', () => {
    const cases: unknown[] = [
      { messageId: '123', messageSeq: 4 },
      { message_id: '9', message_seq: 1, header: { redDot: true } },
      { messageId: null, message_id: '5' },
      {},
      { messageSeq: -1 },
      { messageId: 7 },
      { messageId: 'x'.repeat(100_000) },
      { header: { dup: 'yes' }, messageId: '1' },
      [],
      null,
      'recvack',
    ];
    for (const params of cases) {
      let expected: string | Error;
      try {
        expected = readRecvackParams(params).messageId;
      } catch (err) {
        expected = err as Error;
      }
      if (typeof expected === 'string') expect(readRecvackMessageId(params)).toBe(expected);
      else expect(() => readRecvackMessageId(params)).toThrow(new InvalidParamsError(expected.message));
    }
  });
});

describe('send fast paths', () => {
  it('encodeSendResult writes exactly what encodeResult writes for the send result', () => {
    for (const id of ['s1', 'q"\\\u2028é', 7, 0]) {
      for (const [messageId, seq, reason] of [
        ['18446744073709551615', 4294967295, 1],
        ['0', 0, 5],
      ] as const) {
        const viaObject = encodeResult(id, {
          messageId,
          message_id: messageId,
          messageSeq: seq,
          message_seq: seq,
          reasonCode: reason,
          reason_code: reason,
        });
        expect(encodeSendResult(id, messageId, seq, reason)).toBe(viaObject);
      }
    }
  });

  it('a send payload carries its recv text only when it is exactly what recvPayloadJson gives', () => {
    const payloads: unknown[] = [
      { b: 'x' },
      { nested: { a: [1, 2] }, s: 'é\u2028"' },
      { lone: '\ud800' },
      ' \t\n{"a":1} ',
      '{"a":"\ud83d\ude00"}',
      '{"lone":"\\ud800"}',
      '{"raw":"' + '\ud800' + '"}',
      '[1,2]',
      [1, 2],
      '"just a string"',
      '12',
      'null',
      'aGVsbG8=',
      null,
    ];
    for (const payload of payloads) {
      const p = readSendParams({ channelId: 'b', channelType: 1, payload });
      if (p.payloadJson !== undefined) expect(p.payloadJson).toBe(recvPayloadJson(p.payload));
      expect(p.payload).toEqual(readPayload(payload));
    }
    expect(readSendParams({ channelId: 'b', channelType: 1, payload: { b: 'x' } }).payloadJson).toBe('{"b":"x"}');
    expect(readSendParams({ channelId: 'b', channelType: 1, payload: '[1,2]' }).payloadJson).toBeUndefined();
    // A raw lone surrogate is replaced in the UTF-8 bytes: the text would differ, so it is not carried.
    expect(
      readSendParams({ channelId: 'b', channelType: 1, payload: `{"r":"${String.fromCharCode(0xd800)}"}` }).payloadJson,
    ).toBeUndefined();
  });
});

describe('send payload bytes', () => {
  it('takes a small payload from the shared allocation pool (no ArrayBuffer of its own per send), with the same UTF-8 bytes', () => {
    const lone = String.fromCharCode(0xd800);
    for (const payload of [{ b: 'x'.repeat(64) }, '{"a":"é€😀"}', `{"r":"${lone}"}`, { r: lone }]) {
      const bytes = readSendParams({ channelId: 'b', channelType: 1, payload }).payload;
      const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
      expect(Buffer.from(bytes)).toEqual(Buffer.from(new TextEncoder().encode(text)));
      expect(bytes.buffer.byteLength).toBeGreaterThan(bytes.byteLength);
    }
  });
});

describe('recv', () => {
  it('sends JSON-object payloads as objects and anything else as Base64', () => {
    expect(recvPayloadJson(Buffer.from(' {"type":1}'))).toBe(' {"type":1}');
    expect(recvPayloadJson(Buffer.from('[1]'))).toBe(`"${Buffer.from('[1]').toString('base64')}"`);
    expect(recvPayloadJson(Buffer.from([0xff, 0x00]))).toBe('"/wA="');
    expect(recvPayloadJson(Buffer.from('{broken'))).toBe(`"${Buffer.from('{broken').toString('base64')}"`);
  });

  it('encodes a valid notification with camelCase fields and an exact message id', () => {
    const text = encodeRecv(
      {
        redDot: true,
        syncOnce: false,
        noPersist: false,
        setting: 0x08,
        expire: 60,
        messageId: '1957234823423213568',
        messageSeq: 42,
        clientMsgNo: 'c"1',
        timestamp: 1785398400,
        channelId: 'alice',
        channelType: 1,
        topic: 't',
        fromUid: 'alice',
      },
      '{"type":1}',
    );
    expect(text).toContain('"messageId":"1957234823423213568"');
    expect(JSON.parse(text)).toEqual({
      jsonrpc: '2.0',
      method: 'recv',
      params: {
        header: { redDot: true },
        setting: { topic: true },
        expire: 60,
        messageId: '1957234823423213568',
        messageSeq: 42,
        clientMsgNo: 'c"1',
        timestamp: 1785398400,
        channelId: 'alice',
        channelType: 1,
        topic: 't',
        fromUid: 'alice',
        payload: { type: 1 },
      },
    });
  });
});

describe('jsonString', () => {
  it('is JSON.stringify of the string, escapes and surrogates included', () => {
    const samples = [
      '',
      'alice',
      'u1-42',
      'héllo ✓',
      '\x7f',
      'a"b',
      'a\\b',
      '\n',
      '\u0000',
      '\u001f',
      ' ',
      '\u2028',
      '\ud83d\ude00',
      '\ud800',
      'x\udfff',
    ];
    for (let c = 0; c < 0x10000; c += 0x7f) samples.push(`id-${String.fromCharCode(c)}-${c}`);
    for (const s of samples) expect(jsonString(s), JSON.stringify(s)).toBe(JSON.stringify(s));
  });
});

describe('jsonDepthExceeds', () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  it('finds nesting deeper than the limit, and only that', () => {
    expect(jsonDepthExceeds(nested(MAX_FRAME_DEPTH), MAX_FRAME_DEPTH)).toBe(false);
    expect(jsonDepthExceeds(nested(MAX_FRAME_DEPTH + 1), MAX_FRAME_DEPTH)).toBe(true);
    expect(jsonDepthExceeds(`{"a":${nested(MAX_FRAME_DEPTH)}}`, MAX_FRAME_DEPTH)).toBe(true);
  });

  it('does not count brackets inside strings, however many', () => {
    const text = JSON.stringify({ s: '['.repeat(500), t: ['{'.repeat(100)] });
    expect(jsonDepthExceeds(text, MAX_FRAME_DEPTH)).toBe(false);
  });

  it('passes an ordinary frame', () => {
    expect(jsonDepthExceeds('{"jsonrpc":"2.0","method":"recvack","params":{"messageId":"1","messageSeq":1}}', MAX_FRAME_DEPTH)).toBe(false);
  });
});
