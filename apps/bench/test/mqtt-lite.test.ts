/**
 * The generator's MQTT client against a real mosquitto: QoS 1 publish resolved
 * by PUBACK, delivery of every message in order (large payloads spanning TCP
 * chunks included), PUBACKs for what it receives, and refusals surfaced; a
 * persistent session (clean session false) gets the QoS 1 messages queued
 * while it was away, and its PUBACKs settle them at the broker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCleanup } from '../src/children.ts';
import { MqttLite } from '../src/drivers/mqtt-lite.ts';
import { ensureMosquitto, startMosquitto, type MosquittoServer } from '../src/drivers/mosquitto-server.ts';

/** Resolves once `probe` returns something other than undefined (polled every 10 ms, for at most 10 s). */
async function until<T>(probe: () => T | undefined): Promise<T> {
  for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 10))) {
    const v = probe();
    if (v !== undefined) return v;
  }
  throw new Error('not met within 10 s');
}

describe('MqttLite against mosquitto', () => {
  let server: MosquittoServer;
  /** A client whose `onMessage` gets each PUBLISH's topic and a copy of its payload. */
  const open = (
    uid: string,
    onMessage: (topic: string, payload: Buffer) => void = () => undefined,
    password = `pw-${uid}`,
    clean = true,
    ackEvery?: number,
  ) =>
    MqttLite.connect({
      host: '127.0.0.1',
      port: server.port,
      clientId: uid,
      username: uid,
      password,
      timeoutMs: 5000,
      clean,
      ackEvery,
      onMessage: (buf, start, end, topicStart, topicEnd) =>
        onMessage(buf.toString('utf8', topicStart, topicEnd), Buffer.from(buf.subarray(start, end))),
    });

  beforeAll(async () => {
    installCleanup();
    server = await startMosquitto(ensureMosquitto(() => undefined));
    await server.addUsers(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((u) => [u, `pw-${u}`]));
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('publishes at QoS 1 and delivers every message once, in order, whatever its size', async () => {
    const got: string[] = [];
    let done: () => void = () => undefined;
    const all = new Promise<void>((resolve) => (done = resolve));
    const sizes = [0, 1, 127, 128, 16_383, 16_384, 200_000, 5, 70_000];
    const b = await open('b', (topic, payload) => {
      got.push(`${topic}:${payload.length}:${payload.subarray(0, 8).toString()}`);
      if (got.length === sizes.length * 3) done();
    });
    await b.subscribe(['u/b', 'g/x']);
    const a = await open('a');
    const sends: Promise<void>[] = [];
    for (let round = 0; round < 3; round++) {
      for (const [i, n] of sizes.entries()) sends.push(a.publish(i % 2 ? 'g/x' : 'u/b', `${round}${i}`.padEnd(n, 'é').slice(0, n)));
    }
    await Promise.all(sends);
    await all;
    const want = [0, 1, 2].flatMap((round) =>
      sizes.map((n, i) => {
        const body = `${round}${i}`.padEnd(n, 'é').slice(0, n);
        return `${i % 2 ? 'g/x' : 'u/b'}:${Buffer.byteLength(body)}:${Buffer.from(body).subarray(0, 8).toString()}`;
      }),
    );
    expect(got).toEqual(want);
    await a.close();
    await b.close();
  }, 30_000);

  it('rejects a refused CONNECT and fails pending publishes when closed', async () => {
    await expect(open('c', undefined, 'wrong')).rejects.toThrow(/CONNACK return code [45]/);
    const c = await open('c');
    await c.close();
    await expect(c.publish('u/c', 'x')).rejects.toThrow(/closed/);
  });

  it.each([
    // PUBACKs at the end of each read; then held until 25 are due (below mosquitto's inflight window of
    // 100), with 2,013 messages leaving 13 for close() to acknowledge before its DISCONNECT.
    { d: 'd', e: 'e', n: 2000, ackEvery: undefined },
    { d: 'f', e: 'g', n: 2013, ackEvery: 25 },
  ])(
    'resumes a persistent session: every QoS 1 message queued while away arrives once, in order, and is settled by its PUBACK (ackEvery $ackEvery)',
    async ({ d, e: eUid, n, ackEvery }) => {
      const first = await open(d, undefined, undefined, false);
      expect(first.sessionPresent).toBe(false);
      await first.subscribe([`u/${d}`]);
      await first.close();
      // A clean session of another client id stores nothing: the control that the queue below is the session's.
      const clean = await open(eUid);
      await clean.subscribe([`u/${eUid}`]);
      await clean.close();
      const a = await open('a');
      await Promise.all(Array.from({ length: n }, (_, i) => [a.publish(`u/${d}`, `m${i}`), a.publish(`u/${eUid}`, `m${i}`)]).flat());
      await a.close();

      const got: string[] = [];
      let closed: Promise<void> | undefined;
      // `back` is read by the callback only at the last of n messages, long after `open` resolved.
      const back: MqttLite = await open(
        d,
        (topic, payload) => {
          got.push(`${topic}:${payload.toString()}`);
          // Closed from the last message's callback, inside the read that brought it: that read's
          // PUBACKs (and, with ackEvery, any held back) are still due, so close() must write them.
          if (got.length === n) closed = back.close();
        },
        undefined,
        false,
        ackEvery,
      );
      expect(back.sessionPresent).toBe(true);
      await until(() => closed);
      await closed;
      expect(got).toEqual(Array.from({ length: n }, (_, i) => `u/${d}:m${i}`));

      // The close settled after mosquitto read its DISCONNECT, so after every PUBACK before it; had any
      // PUBACK been missing, mosquitto would redeliver that message now (DUP set) instead of nothing.
      const again: string[] = [];
      const third = await open(d, (topic, payload) => again.push(`${topic}:${payload.toString()}`), undefined, false);
      expect(third.sessionPresent).toBe(true);
      const e: string[] = [];
      const eBack = await open(eUid, (topic, payload) => e.push(`${topic}:${payload.toString()}`));
      expect(eBack.sessionPresent).toBe(false);
      await new Promise((r) => setTimeout(r, 300));
      expect(again).toEqual([]);
      expect(e).toEqual([]);
      await third.close();
      await eBack.close();
    },
    30_000,
  );

  it('refuses an ackEvery that is not a positive integer', async () => {
    await expect(open('a', undefined, undefined, true, 0)).rejects.toThrow(/ackEvery must be a positive integer/);
  });
});
