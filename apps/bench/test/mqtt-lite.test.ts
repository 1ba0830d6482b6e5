/**
 * The generator's MQTT client against a real mosquitto: QoS 1 publish resolved
 * by PUBACK, delivery of every message in order (large payloads spanning TCP
 * chunks included), PUBACKs for what it receives, and refusals surfaced.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCleanup } from '../src/children.ts';
import { MqttLite } from '../src/drivers/mqtt-lite.ts';
import { ensureMosquitto, startMosquitto, type MosquittoServer } from '../src/drivers/mosquitto-server.ts';

describe('MqttLite against mosquitto', () => {
  let server: MosquittoServer;
  const open = (uid: string, onMessage: (topic: string, payload: Buffer) => void = () => undefined, password = `pw-${uid}`) =>
    MqttLite.connect({ host: '127.0.0.1', port: server.port, clientId: uid, username: uid, password, timeoutMs: 5000, onMessage });

  beforeAll(async () => {
    installCleanup();
    server = await startMosquitto(ensureMosquitto(() => undefined));
    await server.addUsers(['a', 'b', 'c'].map((u) => [u, `pw-${u}`]));
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
    a.close();
    b.close();
  }, 30_000);

  it('rejects a refused CONNECT and fails pending publishes when closed', async () => {
    await expect(open('c', undefined, 'wrong')).rejects.toThrow(/CONNACK return code [45]/);
    const c = await open('c');
    c.close();
    await expect(c.publish('u/c', 'x')).rejects.toThrow(/closed/);
  });
});
