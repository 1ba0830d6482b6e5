import { afterAll, describe, expect, it } from 'vitest';
import { connectRpc, post, rawMessageIds, spawnServer, storeToken, tempDir, testEnv } from './helpers.ts';
import { STORE_DRIVERS, storeEnv } from '../../../test-support/stores.ts';

describe.each(STORE_DRIVERS)('durability (store: %s)', (driver) => {
  const store = storeEnv(driver);
  afterAll(() => store.drop());

  it('keeps every acknowledged message, with its id and seq, across a SIGKILL', async () => {
    const dataDir = tempDir();
    const first = await spawnServer(testEnv(dataDir, store.env));
    await storeToken(first.api, 'alice', 'a-token');
    await storeToken(first.api, 'bob', 'b-token');
    const alice = await connectRpc(first.ws, 'alice', 'a-token');

    const acked = new Map<string, { id: string; seq: number }>();
    const total = 400;
    const killAfter = 250;
    let killed = false;
    const sends = Array.from({ length: total }, (_, i) =>
      alice.request('send', { clientMsgNo: `k-${i}`, channelId: 'bob', channelType: 1, payload: { n: i } }).then((r) => {
        const result = r.result as { messageId: string; messageSeq: number; reasonCode: number } | undefined;
        if (killed || result?.reasonCode !== 1) return;
        acked.set(`k-${i}`, { id: result.messageId, seq: result.messageSeq });
        if (acked.size === killAfter) {
          killed = true;
          first.proc.kill('SIGKILL');
        }
      }),
    );
    await Promise.race([Promise.all(sends), alice.closed]);
    await first.exited;
    expect(acked.size).toBe(killAfter);

    // The new process takes the data directory and (PostgreSQL) the node lock the killed one held.
    const second = await spawnServer(testEnv(dataDir, store.env));
    try {
      const sync = await post(second.api, '/channel/messagesync', {
        login_uid: 'alice',
        channel_id: 'bob',
        channel_type: 1,
        pull_mode: 1,
        limit: 10_000,
      });
      expect(sync.status).toBe(200);
      const ids = rawMessageIds(sync.text);
      const stored = new Map<string, { id: string; seq: number }>(
        sync.json.messages.map((m: { client_msg_no: string; message_seq: number }, i: number) => [
          m.client_msg_no,
          { id: ids[i]!, seq: m.message_seq },
        ]),
      );
      for (const [clientMsgNo, ack] of acked) expect(stored.get(clientMsgNo)).toEqual(ack);
      const seqs = sync.json.messages.map((m: { message_seq: number }) => m.message_seq);
      expect(seqs).toEqual(seqs.map((_: number, i: number) => i + 1));
      // The sender's own sends still count as read (its latest-send mark survived the kill), the peer's are unread.
      const conversation = async (uid: string, peer: string) =>
        (await post(second.api, '/conversation/list', { uid })).json.conversations.find(
          (c: { channel_id: string }) => c.channel_id === peer,
        );
      expect(await conversation('alice', 'bob')).toMatchObject({ unread: 0 });
      expect(await conversation('bob', 'alice')).toMatchObject({ unread: seqs.length });

      const after = await post(second.api, '/message/send', {
        from_uid: 'alice',
        channel_id: 'bob',
        channel_type: 1,
        payload: Buffer.from('after restart').toString('base64'),
      });
      expect(after.json.message_seq).toBe(seqs.length + 1);
    } finally {
      second.proc.kill('SIGTERM');
      await second.exited;
    }
  }, 60_000);
});
