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

describe('MqttLite against mosquitto', () => {
  let server: MosquittoServer;
  /** A client whose `onMessage` gets each PUBLISH's topic and a copy of its payload. */
  const open = (uid: string, onMessage: (topic: string, payload: Buffer) => void = () => undefined, password = `pw-${uid}`, clean = true) =>
    MqttLite.connect({
      host: '127.0.0.1',
      port: server.port,
      clientId: uid,
      username: uid,
      password,
      timeoutMs: 5000,
      clean,
      onMessage: (buf, start, end, topicStart, topicEnd) =>
        onMessage(buf.toString('utf8', topicStart, topicEnd), Buffer.from(buf.subarray(start, end))),
    });

  beforeAll(async () => {
    installCleanup();
    server = await startMosquitto(ensureMosquitto(() => undefined));
    await server.addUsers(['a', 'b', 'c', 'd', 'e'].map((u) => [u, `pw-${u}`]));
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

  it('resumes a persistent session: every QoS 1 message queued while away arrives once, in order, and is settled by its PUBACK', async () => {
    const n = 2000;
    const first = await open('d', undefined, undefined, false);
    expect(first.sessionPresent).toBe(false);
    await first.subscribe(['u/d']);
    await first.close();
    // A clean session of another client id stores nothing: the control that the queue below is the session's.
    const clean = await open('e');
    await clean.subscribe(['u/e']);
    await clean.close();
    const a = await open('a');
    await Promise.all(Array.from({ length: n }, (_, i) => [a.publish('u/d', `m${i}`), a.publish('u/e', `m${i}`)]).flat());
    await a.close();

    const got: string[] = [];
    let done: () => void = () => undefined;
    const all = new Promise<void>((resolve) => (done = resolve));
    const back = await open(
      'd',
      (topic, payload) => {
        got.push(`${topic}:${payload.toString()}`);
        if (got.length === n) done();
      },
      undefined,
      false,
    );
    expect(back.sessionPresent).toBe(true);
    await all;
    expect(got).toEqual(Array.from({ length: n }, (_, i) => `u/d:m${i}`));
    await back.close();

    // back.close() settled after mosquitto read its DISCONNECT, so after every PUBACK before it; had any
    // PUBACK been missing, mosquitto would redeliver that message now (DUP set) instead of nothing.
    const again: string[] = [];
    const third = await open('d', (topic, payload) => again.push(`${topic}:${payload.toString()}`), undefined, false);
    expect(third.sessionPresent).toBe(true);
    const e: string[] = [];
    const eBack = await open('e', (topic, payload) => e.push(`${topic}:${payload.toString()}`));
    expect(eBack.sessionPresent).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect(again).toEqual([]);
    expect(e).toEqual([]);
    await third.close();
    await eBack.close();
  }, 30_000);
});
