import { describe, expect, it } from 'vitest';
import type { MessageRecord } from '../v2/records.ts';
import type { RawMessage } from '../v2/scan-shard.ts';
import { jsonString, messageHead, messageTail } from './record-json.ts';

const awkward = ['', 'plain', 'quote " inside', 'back\\slash', 'tab\tnew\nline\r', '\u0000\u001f\u007f', 'é 群 😀', 'lone \ud800 high', 'lone \udc00 low', '\u2028\u2029', '</script>'];

describe('record JSON', () => {
  it('quotes strings exactly as JSON.stringify does', () => {
    for (const s of awkward) expect(jsonString(s)).toBe(JSON.stringify(s));
  });

  it('writes a message line byte for byte as JSON.stringify of its MessageRecord', () => {
    for (const [i, s] of awkward.entries()) {
      const m: RawMessage = {
        ch: '0123456789abcdef', seq: 2 ** 40 + i, header: 0x52, setting: i, expire: 4294967295, message_id: '18446744073709551615', column_seq: i,
        client_msg_no: s, timestamp: -5, channel_id: `g${s}`, channel_type: 2, topic: s, from_uid: s, payload: Buffer.from(s).toString('base64'), term: '0', stream_no: s,
      };
      const rec: MessageRecord = {
        node_id: 1023, shard: 7, channel_id: `v3${s}`, v2_channel_id: m.channel_id, channel_type: m.channel_type, message_seq: m.seq, message_id: m.message_id,
        client_msg_no: m.client_msg_no, from_uid: m.from_uid, header: m.header, setting: m.setting, expire: m.expire, timestamp: m.timestamp, topic: m.topic,
        stream_no: m.stream_no, term: m.term, payload: m.payload,
      };
      expect(messageHead(1023, 7, `v3${s}`) + messageTail(m)).toBe(`${JSON.stringify(rec)}\n`);
    }
  });
});
