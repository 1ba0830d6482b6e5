import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPebble } from '@parley/pebble';
import { fixtureDir, hasFixture } from './helpers.ts';
import { messageTailBound, writeMessageTail } from '../src/archive/record-json.ts';
import { readTails, scanShard, type CheckedMessage, type RawMessage } from '../src/v2/scan-shard.ts';
import { EventRecorder, replay, type EventBatch, type ReplaySink } from '../src/v2/shard-events.ts';

/** A sink that logs every call (bytes as hex; a message's tail as text, whether encoded or not). */
function loggingSink(): { sink: ReplaySink; calls: unknown[] } {
  const calls: unknown[] = [];
  const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
  const sink = {
    loadingTails: true,
    // a recorded message carries the checked columns; the others only inside its encoded tail
    message: (m: RawMessage) => {
      const {
        ch,
        seq,
        column_seq,
        header,
        channel_id,
        channel_type,
        message_id,
        from_uid,
        client_msg_no,
        stream_no,
        setting,
        timestamp,
        term,
      } = m;
      const checked: CheckedMessage = {
        ch,
        seq,
        column_seq,
        header,
        channel_id,
        channel_type,
        message_id,
        from_uid,
        client_msg_no,
        stream_no,
        setting,
        timestamp,
        term,
      };
      const o = { buf: Buffer.alloc(messageTailBound(m)), used: 0, reserve: () => undefined };
      writeMessageTail(o, m);
      calls.push(['message', checked, o.buf.toString('utf8', 0, o.used)]);
    },
    encodedMessage: (m: CheckedMessage, tail: Uint8Array) => calls.push(['message', m, Buffer.from(tail).toString('utf8')]),
    tail(ch: string, lastSeq: number, setTimeNs: string) {
      if (this.loadingTails) calls.push(['tail', ch, lastSeq, setTimeNs]);
    },
    user: (u: unknown) => calls.push(['user', u]),
    device: (d: unknown) => calls.push(['device', d]),
    channelInfo: (c: unknown) => calls.push(['channelInfo', c]),
    member: (m: unknown) => calls.push(['member', m]),
    conversation: (c: unknown) => calls.push(['conversation', c]),
    systemUid: (uid: string) => calls.push(['systemUid', uid]),
    clusterConfig: (ch: string, id: string, type: number) => calls.push(['clusterConfig', ch, id, type]),
    archived: (kind: string, key: Uint8Array, value: Uint8Array) => calls.push(['archived', kind, hex(key), hex(value)]),
    problem: (kind: string, key: Uint8Array, detail: string) => calls.push(['problem', kind, hex(key), detail]),
  };
  return { sink, calls };
}

describe.each(['basic-closed', 'edge-closed'])('a recorded shard scan replays as the scan itself: %s', (name) => {
  it.runIf(hasFixture(name))('same calls in the same order, across batches and a copy between threads', () => {
    for (let shard = 0; shard < 8; shard++) {
      const dir = join(fixtureDir(name), 'datadir', 'db', 'wukongimdb', `shard${String(shard).padStart(3, '0')}`);
      const direct = loggingSink();
      const db = openPebble(dir);
      readTails(db, direct.sink);
      direct.sink.loadingTails = false;
      scanShard(db, direct.sink);

      const batches: EventBatch[] = [];
      const recorder = new EventRecorder((batch) => batches.push(structuredClone(batch)), 50);
      readTails(db, recorder);
      recorder.endTails();
      scanShard(db, recorder);
      recorder.flush();
      db.close();
      const replayed = loggingSink();
      for (const b of batches) replay(b, replayed.sink);

      expect(batches.length).toBeGreaterThan(2);
      expect(replayed.calls).toEqual(direct.calls);
      expect(replayed.sink.loadingTails).toBe(false);
    }
  });
});
