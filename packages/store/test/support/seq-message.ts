import type { StoredMessage } from '../../src/index.ts';

/**
 * A stored message of `channelId` at `seq`, every other field a plain default derived from
 * `seq` (id = seq, client_msg_no `c<seq>`, sender alice, payload one byte `seq & 0xff`), with
 * `fields` over it: the store tests' one message builder, each test naming what it varies.
 */
export function storedMessage(channelId: string, seq: number, fields: Partial<StoredMessage> = {}): StoredMessage {
  return {
    channelId,
    channelType: 1,
    messageSeq: seq,
    messageId: BigInt(seq),
    clientMsgNo: `c${seq}`,
    fromUid: 'alice',
    setting: 0,
    flags: 0,
    expire: 0,
    topic: '',
    createdAt: 1_700_000_000_000 + seq,
    payload: new Uint8Array([seq & 0xff]),
    ...fields,
  };
}

/**
 * Message `seq` of a load spread over `channels` channels (`wal-buffer.test.ts` and its child):
 * its seq is its channel's seq too (unique per channel), its id the seq, its payload `bytes`
 * bytes of `seq & 0xff`, so a reader can check each row against its seq alone.
 */
export function seqMessage(seq: number, bytes: number, channels: number): StoredMessage {
  return storedMessage(`s${seq % channels}`, seq, { clientMsgNo: `m${seq}`, payload: new Uint8Array(bytes).fill(seq & 0xff) });
}
