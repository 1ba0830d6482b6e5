/**
 * mosquitto as the peer, driven with `mqtt` (MQTT 3.1.1): a user's inbox is
 * topic `u/<uid>`, a group is `g/<id>`; publishes and subscriptions are QoS 1,
 * so each send has a PUBACK (timed like a SENDACK) and each delivery is
 * acknowledged (like a RECVACK). Persistence is off: acks are in memory only.
 * The online scenarios (S1, S2) drive it with {@link MqttLite}, the offline
 * catch-up (S3) with the `mqtt` package's persistent sessions.
 */
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { MqttLite } from './mqtt-lite.ts';
import { tokenOf } from './parley-server.ts';
import { ensureMosquitto, startMosquitto } from './mosquitto-server.ts';
import type { Connection, Driver, OnMessage } from './types.ts';

function open(port: number, uid: string, options: Partial<IClientOptions>, onMessage?: OnMessage): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = connect({
      host: '127.0.0.1',
      port,
      protocolVersion: 4,
      clientId: uid,
      username: uid,
      password: tokenOf(uid),
      reconnectPeriod: 0,
      connectTimeout: 10_000,
      keepalive: 0,
      ...options,
    });
    if (onMessage) client.on('message', (_topic, payload) => onMessage(payload.toString('utf8')));
    client.once('connect', () => resolve(client));
    client.once('error', (e) => {
      client.end(true);
      reject(e);
    });
  });
}

/** Starts a fresh mosquitto and returns its driver. */
export async function startMosquittoDriver(log: (line: string) => void): Promise<Driver> {
  const server = await startMosquitto(ensureMosquitto(log));
  const groupsOf = new Map<string, string[]>();
  return {
    name: 'mosquitto',
    pid: server.pid,
    durability: 'QoS 1 PUBACK from memory (persistence false)',
    provisionUsers: (uids) => server.addUsers(uids.map((u) => [u, tokenOf(u)])),
    async createGroup(id, members) {
      for (const m of members) groupsOf.set(m, [...(groupsOf.get(m) ?? []), id]);
    },
    async connect(uid, onMessage): Promise<Connection> {
      const client = await MqttLite.connect({
        host: '127.0.0.1',
        port: server.port,
        clientId: uid,
        username: uid,
        password: tokenOf(uid),
        timeoutMs: 10_000,
        onMessage: (_topic, payload) => onMessage(payload.toString('utf8')),
      });
      try {
        await client.subscribe([`u/${uid}`, ...(groupsOf.get(uid) ?? []).map((g) => `g/${g}`)]);
      } catch (e) {
        client.close();
        throw e;
      }
      return {
        send: (to, body) => client.publish(`${to.kind === 'user' ? 'u' : 'g'}/${to.id}`, body),
        close: () => client.close(),
      };
    },
    async prepareOffline(uid) {
      const client = await open(server.port, uid, { clientId: `off-${uid}`, clean: false });
      await client.subscribeAsync(`u/${uid}`, { qos: 1 });
      await client.endAsync();
    },
    async catchUp(uid, _fromUid, expected, onMessage) {
      let got = 0;
      let done: () => void = () => undefined;
      const all = new Promise<void>((resolve) => (done = resolve));
      const client = await open(server.port, uid, { clientId: `off-${uid}`, clean: false }, (body) => {
        onMessage(body);
        if (++got >= expected) done();
      });
      const timeout = new Promise<void>((_, reject) =>
        setTimeout(() => reject(new Error(`catch-up of ${uid}: ${got}/${expected}`)), 30_000).unref(),
      );
      try {
        await Promise.race([all, timeout]);
      } finally {
        client.end(true);
      }
    },
    stop: () => server.stop(),
  };
}
