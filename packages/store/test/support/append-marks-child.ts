/**
 * A process that appends one message with its latest-send mark and then waits to be killed
 * (`pending-marks.test.ts`): it opens the embedded store in `argv[2]` with marks applied only
 * once a minute, so at the kill the committed mark is in `pending_marks` alone. Prints
 * `committed` once the append is durable.
 */
import { openEmbeddedStore } from '../../src/index.ts';

const store = await openEmbeddedStore({ dataDir: process.argv[2]!, sync: 'full', markApplyMs: 60_000 });
await store.messages.appendBatch(
  [
    {
      channelId: 'k1',
      channelType: 2,
      messageSeq: 1,
      messageId: 901n,
      clientMsgNo: 'k1-1',
      fromUid: 'alice',
      setting: 0,
      flags: 0,
      expire: 0,
      topic: '',
      createdAt: 1_700_000_000_000,
      payload: new Uint8Array([1]),
    },
  ],
  [{ channelId: 'k1', channelType: 2, uid: 'alice', seq: 1 }],
);
process.stdout.write('committed\n');
setInterval(() => {}, 1000);
