import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore, type Store } from '@parley/store';
import { AppendQueue, type NewMessage } from './append-queue.ts';

let store: Store;
let queue: AppendQueue;
let nextId = 1000n;

beforeEach(async () => {
  store = await openEmbeddedStore({ dataDir: mkdtempSync(join(tmpdir(), 'parley-aq-')), sync: 'normal' });
  queue = new AppendQueue(store.messages, 64);
});
afterEach(() => store.close());

function msg(over: Partial<NewMessage> = {}): NewMessage {
  return {
    channelId: 'g',
    channelType: 2,
    messageId: nextId++,
    clientMsgNo: '',
    fromUid: 'u',
    setting: 0,
    flags: 0,
    expire: 0,
    topic: '',
    createdAt: Date.now(),
    payload: Buffer.from('p'),
    ...over,
  };
}

describe('AppendQueue', () => {
  it('numbers each channel 1, 2, 3 … in send order across batches', async () => {
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => queue.append(msg({ channelId: i % 2 ? 'a' : 'b' }), true)));
    const seqsA = results.filter((_, i) => i % 2).map((r) => (r.kind === 'appended' ? r.messageSeq : -1));
    expect(seqsA).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(queue.stats.batches).toBeGreaterThanOrEqual(4);
    expect(await store.messages.loadTail('a', 2)).toBe(100);
  });

  it('coalesces a repeated client_msg_no inside one batch and across batches', async () => {
    const [a, b] = await Promise.all([queue.append(msg({ clientMsgNo: 'k' }), true), queue.append(msg({ clientMsgNo: 'k' }), true)]);
    expect(a).toMatchObject({ kind: 'appended', messageSeq: 1 });
    expect(b).toEqual({ kind: 'duplicate', messageId: (a as { messageId: bigint }).messageId, messageSeq: 1 });
    const later = await queue.append(msg({ clientMsgNo: 'k' }), true);
    expect(later).toEqual(b);
    const other = await queue.append(msg({ clientMsgNo: 'k', fromUid: 'v' }), true);
    expect(other).toMatchObject({ kind: 'appended', messageSeq: 2 });
  });

  it('refuses a reused client_msg_no with a different payload and writes nothing for it', async () => {
    await queue.append(msg({ clientMsgNo: 'x' }), true);
    expect(await queue.append(msg({ clientMsgNo: 'x', payload: Buffer.from('other') }), true)).toEqual({ kind: 'conflict' });
    expect(await store.messages.loadTail('g', 2)).toBe(1);
  });

  it('keeps 64-bit ids exact through the store', async () => {
    const id = 2_124_331_629_039_063_041n;
    await queue.append(msg({ messageId: id }), true);
    const { messages } = await store.messages.range('g', 2, 1, 10, 10, false);
    expect(messages[0]!.messageId).toBe(id);
  });

  it('resumes above the committed tail in a new queue (as after a restart)', async () => {
    const fresh = new AppendQueue(store.messages, 8);
    await fresh.append(msg(), true);
    await fresh.append(msg(), true);
    const again = new AppendQueue(store.messages, 8);
    expect(await again.append(msg(), true)).toMatchObject({ messageSeq: 3 });
  });
});
