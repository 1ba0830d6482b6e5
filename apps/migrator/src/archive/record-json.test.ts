import { describe, expect, it } from 'vitest';
import type { ArchivedRecord, ConversationRecord, MemberRecord, MessageRecord } from '../v2/records.ts';
import type { RawMessage } from '../v2/scan-shard.ts';
import {
  jsonString,
  messageHead,
  messageTailBound,
  writeArchivedLine,
  writeConversationLine,
  writeMemberLine,
  writeMessageTail,
} from './record-json.ts';
import type { ByteOut } from './json-bytes.ts';

/** The tail of a message line, written into a buffer exactly as large as its bound (a bound too small throws). */
function messageTail(m: RawMessage): string {
  const o: ByteOut = {
    buf: Buffer.alloc(messageTailBound(m)),
    used: 0,
    reserve(n) {
      if (n > this.buf.length - this.used) throw new Error(`bound exceeded by ${n - (this.buf.length - this.used)}`);
    },
  };
  writeMessageTail(o, m);
  return o.buf.toString('utf8', 0, o.used);
}

/** What a line writer writes, as text. */
function line<R>(write: (o: ByteOut, r: R) => void, r: R): string {
  const o: ByteOut = {
    buf: Buffer.alloc(2),
    used: 0,
    reserve(n) {
      if (n <= this.buf.length - this.used) return;
      const next = Buffer.alloc(this.used + n);
      this.buf.copy(next, 0, 0, this.used);
      this.buf = next;
    },
  };
  write(o, r);
  return o.buf.toString('utf8', 0, o.used);
}

const awkward = [
  '',
  'plain',
  'quote " inside',
  'back\\slash',
  'tab\tnew\nline\r',
  '\u0000\u001f\u007f',
  'é 群 😀',
  'lone \ud800 high',
  'lone \udc00 low',
  '\u2028\u2029',
  '</script>',
];

describe('record JSON', () => {
  it('quotes strings exactly as JSON.stringify does', () => {
    for (const s of awkward) expect(jsonString(s)).toBe(JSON.stringify(s));
  });

  it('writes a message line byte for byte as JSON.stringify of its MessageRecord', () => {
    for (const [i, s] of awkward.entries()) {
      const m: RawMessage = {
        ch: '0123456789abcdef',
        seq: 2 ** 40 + i,
        header: 0x52,
        setting: i,
        expire: 4294967295,
        message_id: '18446744073709551615',
        column_seq: i,
        client_msg_no: s,
        timestamp: -5,
        channel_id: `g${s}`,
        channel_type: 2,
        topic: s,
        from_uid: s,
        payload: Buffer.from(s).toString('base64'),
        term: '0',
        stream_no: s,
      };
      const rec: MessageRecord = {
        node_id: 1023,
        shard: 7,
        channel_id: `v3${s}`,
        v2_channel_id: m.channel_id,
        channel_type: m.channel_type,
        message_seq: m.seq,
        message_id: m.message_id,
        client_msg_no: m.client_msg_no,
        from_uid: m.from_uid,
        header: m.header,
        setting: m.setting,
        expire: m.expire,
        timestamp: m.timestamp,
        topic: m.topic,
        stream_no: m.stream_no,
        term: m.term,
        payload: m.payload,
      };
      expect(messageHead(1023, 7, `v3${s}`) + messageTail(m)).toBe(`${JSON.stringify(rec)}\n`);
    }
  });

  it('writes conversation, member and archived records as JSON.stringify does', () => {
    for (const [i, s] of awkward.entries()) {
      const c: ConversationRecord = {
        node_id: 1,
        shard: i,
        v2_id: `${2 ** 60 + i}`,
        uid: s,
        type: i % 3,
        channel_id: `v3${s}`,
        v2_channel_id: `v2${s}`,
        channel_type: 1 + (i % 2),
        unread_count: 4294967295,
        readed_to_msg_seq: 2 ** 50,
        deleted_at_msg_seq: 0,
        created_at_ns: '1772451001425858567',
        updated_at_ns: s,
      };
      expect(line(writeConversationLine, c)).toBe(`${JSON.stringify(c)}\n`);
      const m: MemberRecord = {
        node_id: 9,
        shard: 0,
        list: i % 2 ? 'allow' : 'subscriber',
        channel_id: s,
        channel_type: 2,
        uid: `u${s}`,
        created_at_ns: '0',
        updated_at_ns: s,
      };
      expect(line(writeMemberLine, m)).toBe(`${JSON.stringify(m)}\n`);
      const a: ArchivedRecord = { kind: s, node_id: 3, shard: 5, key: Buffer.from(s).toString('base64'), value: '' };
      expect(line(writeArchivedLine, a)).toBe(`${JSON.stringify(a)}\n`);
    }
  });
});
