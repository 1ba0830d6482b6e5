/**
 * A process that appends batches to the embedded store in `argv[2]` without pause until it is
 * killed (`wal-buffer.test.ts`), with the WAL buffer as `argv[3]` says (on or off). After each
 * batch is acknowledged (its commit durable) it prints `acked <seq>`, the last seq of the batch.
 * Batches alternate between 20 small messages and 300 of 2 KiB, so commits of one write and of
 * several pieces are both in flight when the kill comes.
 */
import { openEmbeddedStore, type WalBufferMode } from '../../src/index.ts';
import { seqMessage } from './seq-message.ts';

const store = await openEmbeddedStore({ dataDir: process.argv[2]!, sync: 'full', walBuffer: process.argv[3] as WalBufferMode });
if (!store.walBuffer?.on && process.argv[3] === 'on') throw new Error('the WAL buffer is not on');
let seq = 0;
for (let batch = 0; ; batch++) {
  const n = batch % 2 === 0 ? 20 : 300;
  const bytes = batch % 2 === 0 ? 40 : 2048;
  const rows = Array.from({ length: n }, () => seqMessage(++seq, bytes, 7));
  await store.messages.appendBatch(rows, []);
  process.stdout.write(`acked ${seq}\n`);
}
