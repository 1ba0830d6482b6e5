/**
 * mosquitto as the peer, driven with {@link MqttLite} (MQTT 3.1.1): a user's
 * inbox is topic `u/<uid>`, a group is `g/<id>`; publishes and subscriptions
 * are QoS 1, so each send has a PUBACK (timed like a SENDACK) and each
 * delivery is acknowledged (like a RECVACK). Persistence is off: acks are in
 * memory only. The offline catch-up (S3) uses persistent sessions (clean
 * session false, client id `off-<uid>`): mosquitto queues the QoS 1 messages
 * of an offline user and delivers them when that session reconnects.
 */
import { deadline } from '../deadlines.ts';
import { MqttLite, type MqttLiteOptions } from './mqtt-lite.ts';
import { tokenOf } from './parley-server.ts';
import { ensureMosquitto, MOSQUITTO_INFLIGHT, startMosquitto } from './mosquitto-server.ts';
import type { Connection, Driver } from './types.ts';

/** How long a CONNECT, and a whole catch-up, may take, ms. */
const TIMEOUT_MS = 10_000;
const CATCH_UP_TIMEOUT_MS = 30_000;
/**
 * PUBACKs a catching-up client writes together: a quarter of mosquitto's
 * inflight window, so the broker always has rows left to send while the
 * client's acknowledgements are on their way (a Parley catch-up acknowledges
 * a page of 100 rows by asking for the next). PUBACKed one read at a time, the
 * rows came 4–7 per read on some hosts and the generator's reads and PUBACK
 * writes took 75–80% of its core (README, S3).
 */
const CATCH_UP_ACK_EVERY = MOSQUITTO_INFLIGHT / 4;

/** Starts a fresh mosquitto and returns its driver. */
export async function startMosquittoDriver(log: (line: string) => void): Promise<Driver> {
  const server = await startMosquitto(ensureMosquitto(log));
  const groupsOf = new Map<string, string[]>();
  /** A connection of `uid`: a clean session under the uid, or (clean false) its persistent session `off-<uid>`. */
  const open = (uid: string, onMessage: MqttLiteOptions['onMessage'], clean = true, ackEvery = 1): Promise<MqttLite> =>
    MqttLite.connect({
      host: '127.0.0.1',
      port: server.port,
      clientId: clean ? uid : `off-${uid}`,
      username: uid,
      password: tokenOf(uid),
      timeoutMs: TIMEOUT_MS,
      clean,
      onMessage,
      ackEvery,
    });
  return {
    name: 'mosquitto',
    pid: server.pid,
    durability: 'QoS 1 PUBACK from memory (persistence false)',
    provisionUsers: (uids) => server.addUsers(uids.map((u) => [u, tokenOf(u)])),
    async createGroup(id, members) {
      for (const m of members) groupsOf.set(m, [...(groupsOf.get(m) ?? []), id]);
    },
    async connect(uid, deliveries): Promise<Connection> {
      const client = await open(uid, (buf, start, end) => deliveries.bytes(buf, start, end));
      try {
        await client.subscribe([`u/${uid}`, ...(groupsOf.get(uid) ?? []).map((g) => `g/${g}`)]);
      } catch (e) {
        void client.close();
        throw e;
      }
      return {
        send: (to, body) => client.publish(`${to.kind === 'user' ? 'u' : 'g'}/${to.id}`, body),
        close: () => void client.close(),
      };
    },
    async prepareOffline(uid) {
      const client = await open(uid, () => undefined, false);
      try {
        await client.subscribe([`u/${uid}`]);
      } finally {
        // Gone before the backlog is sent, so that mosquitto queues it rather than sending it to this connection.
        await client.close();
      }
    },
    async catchUp(uid, _fromUid, expected, rows) {
      let got = 0;
      let done: () => void = () => undefined;
      let fail: (e: Error) => void = () => undefined;
      const all = new Promise<void>((resolve, reject) => ((done = resolve), (fail = reject)));
      const client = await open(
        uid,
        (buf, start, end) => {
          rows.bytes(buf, start, end);
          if (++got >= expected) done();
        },
        false,
        CATCH_UP_ACK_EVERY,
      );
      const cancel = deadline(CATCH_UP_TIMEOUT_MS, () => fail(new Error(`catch-up of ${uid}: ${got}/${expected}`)));
      try {
        if (!client.sessionPresent) throw new Error(`catch-up of ${uid}: mosquitto has no stored session`);
        await all;
      } finally {
        cancel();
        void client.close();
      }
    },
    stop: () => server.stop(),
  };
}
