import type { StoredMessage } from '../../src/index.ts';

/**
 * Message `seq` of a load spread over `channels` channels (`wal-buffer.test.ts` and its child):
 * its seq is its channel's seq too (unique per channel), its id the seq, its payload `bytes`
 * bytes of `seq & 0xff`, so a reader can check each row against its seq alone.
 */
export function seqMessage(seq: number, bytes: number, channels: number): StoredMessage {
  return {
    channelId: `s${seq % channels}`,
    channelType: 1,
    messageSeq: seq,
    messageId: BigInt(seq),
    clientMsgNo: `m${seq}`,
    fromUid: 'alice',
    setting: 0,
    flags: 0,
    expire: 0,
    topic: '',
    createdAt: 1_700_000_000_000 + seq,
    payload: new Uint8Array(bytes).fill(seq & 0xff),
  };
}
