/**
 * The cluster runtime in process: three nodes' services over the real
 * PostgreSQL (one schema) and NATS (one cluster id). Sends entering any node
 * are sequenced by the owner of their channel's slot (one log, one sequence),
 * RECVs reach sessions on other nodes, and the caches follow writes made on
 * another node.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelType, personChannelId } from '@parley/shared';
import { openPostgresStore, type Store } from '@parley/store';
import { createTestSchema, postgresReachable, TEST_POSTGRES_URL, type TestSchema } from '@parley/store/testing';
import pg from 'pg';
import { ClusterRuntime } from '../src/cluster/cluster.ts';
import { attachCluster } from '../src/cluster/attach.ts';
import { loadConfig } from '../src/config/config.ts';
import { createLogger } from '../src/log.ts';
import type { Delivery } from '../src/messaging/delivery.ts';
import type { SessionHandle } from '../src/messaging/presence.ts';
import type { SendCommand } from '../src/messaging/send.service.ts';
import { createServices, type Services } from '../src/services.ts';
import { waitFor } from '../../../test-support/http.ts';

const pgUp = await postgresReachable();
const { Client } = pg;
const log = createLogger('silent');

interface Node {
  id: number;
  store: Store;
  services: Services;
  cluster: ClusterRuntime;
}

/** A session as the gateways give the messaging core one: it records what it is handed. */
function session(id: number, uid: string) {
  const got: Delivery[] = [];
  const kicked: number[] = [];
  const handle: SessionHandle = {
    id,
    uid,
    deviceFlag: 1,
    deviceId: `${uid}-d`,
    deviceLevel: 1,
    protocol: 'jsonrpc',
    deliver: (d) => void got.push(d),
    kick: (reason) => void kicked.push(reason),
    close() {},
  };
  return { handle, got, kicked };
}

const cmd = (fromUid: string, channelId: string, channelType: number, clientMsgNo: string, text: string): SendCommand => ({
  fromUid,
  deviceId: `${fromUid}-d`,
  channelId,
  channelType,
  payload: Buffer.from(text),
  clientMsgNo,
  setting: 0,
  topic: '',
  expire: 0,
  redDot: true,
  syncOnce: false,
  noPersist: false,
});

describe.skipIf(!pgUp)('cluster routing (in process)', () => {
  let schema: TestSchema;
  const nodes: Node[] = [];

  beforeAll(async () => {
    schema = createTestSchema('parley_routing');
    const clusterId = `r${randomBytes(4).toString('hex')}`;
    await Promise.all(
      [1, 2, 3].map(async (id) => {
        const config = loadConfig(undefined, {
          PARLEY_NODE_ID: String(id),
          PARLEY_STORE_DRIVER: 'postgres',
          PARLEY_STORE_POSTGRES_URL: schema.url,
          PARLEY_CLUSTER_ENABLED: 'true',
          PARLEY_CLUSTER_ID: clusterId,
          PARLEY_CLUSTER_NODE_TIMEOUT: '600ms',
        });
        const store = await openPostgresStore({ url: schema.url, sync: 'full', poolSize: 4, mustExist: false, log });
        const services = await createServices(config, store, log);
        const cluster = (await attachCluster(config, services, store, log))!;
        nodes.push({ id, store, services, cluster });
      }),
    );
    nodes.sort((a, b) => a.id - b.id);
    await waitFor(async () => {
      for (const n of nodes) n.cluster.slots.nudge();
      const held = nodes.map((n) => n.cluster.slots.heldSlots().length);
      return held.every((h) => h === 4) ? true : undefined;
    }, 15_000);
  }, 30_000);

  afterAll(async () => {
    for (const n of nodes) {
      await n.services.queue.drain();
      await n.cluster.stop();
      await n.store.close();
    }
    await schema?.drop();
  });

  it('sequences one channel in one log whichever node the sends enter, and answers after the owner commits', async () => {
    const seqs: number[] = [];
    const ids: bigint[] = [];
    for (let i = 0; i < 9; i++) {
      const n = nodes[i % 3]!;
      const r = await n.services.send.send(cmd('amy', 'ben', ChannelType.Person, `m-${i}`, `hello ${i}`));
      expect(r.reason).toBe(1);
      seqs.push(r.messageSeq);
      ids.push(r.messageId);
    }
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(new Set(ids).size).toBe(9);
    const page = await nodes[2]!.store.messages.range(personChannelId('amy', 'ben'), 1, 1, 100, 100, false);
    expect(page.messages.map((m) => m.messageSeq)).toEqual(seqs);
    expect(page.messages.map((m) => m.messageId)).toEqual(ids);
    // The same client_msg_no through another node is the same message.
    const again = await nodes[1]!.services.send.send(cmd('amy', 'ben', ChannelType.Person, 'm-0', 'hello 0'));
    expect({ seq: again.messageSeq, id: again.messageId }).toEqual({ seq: 1, id: ids[0] });
    const router = nodes.map((n) => n.cluster.router.stats);
    expect(router.reduce((t, s) => t + s.forwarded, 0)).toBeGreaterThan(0);
  });

  it('delivers to sessions on other nodes, without echo to the sending session, and follows subscriber changes made elsewhere', async () => {
    const ann = session(1, 'ann');
    const bo = session(1, 'bo');
    const cy = session(1, 'cy');
    nodes[0]!.services.presence.add(ann.handle);
    nodes[1]!.services.presence.add(bo.handle);
    nodes[2]!.services.presence.add(cy.handle);
    await waitFor(async () =>
      nodes.every((n) => ['ann', 'bo', 'cy'].every((u) => n.services.presence.sessionsOf(u) || n.cluster.presence.nodesOf(u)))
        ? true
        : undefined,
    );
    await nodes[1]!.services.channels.upsert('crew', 2, {});
    await nodes[1]!.services.channels.addSubscribers('crew', 2, ['ann', 'bo']);
    const first = await nodes[0]!.services.send.send({ ...cmd('ann', 'crew', 2, 'c-1', 'one'), session: ann.handle });
    expect(first.reason).toBe(1);
    await waitFor(async () => (bo.got.length === 1 ? true : undefined));
    expect(bo.got[0]!.messageId).toBe(first.messageId);
    expect(ann.got).toHaveLength(0);

    // cy joins through node 3; the owner (wherever it is) fans the next message out to cy too.
    await nodes[2]!.services.channels.addSubscribers('crew', 2, ['cy']);
    // The change reaches the owner's cache over the bus: probe until a message sent after it reaches cy.
    const probes = new Set<bigint>();
    await waitFor(async () => {
      const r = await nodes[0]!.services.send.send({ ...cmd('ann', 'crew', 2, `c-probe-${probes.size}`, 'two'), session: ann.handle });
      expect(r.reason).toBe(1);
      probes.add(r.messageId);
      return cy.got.some((d) => probes.has(d.messageId)) ? true : undefined;
    }, 5000);
    expect(ann.got).toHaveLength(0);
  });

  it('refuses a stale owner’s append (the lease moved on) and sequences the send at the new owner, without a gap', async () => {
    const owner = nodes[0]!;
    const held = owner.cluster.slots.heldSlots();
    let peer = '';
    for (let i = 0; !held.includes(owner.cluster.slots.table.slotOf(personChannelId('amy', peer || 'x'))) || peer === ''; i++)
      peer = `zed${i}`;
    const channel = personChannelId('amy', peer);
    const slot = owner.cluster.slots.table.slotOf(channel);
    const first = await owner.services.send.send(cmd('amy', peer, ChannelType.Person, 's-1', 'one'));
    expect(first).toMatchObject({ reason: 1, messageSeq: 1 });

    // Behind the owner's back the lease runs out and another holder (id 1000, not a live node) takes it: the owner
    // still believes it holds the slot, as a paused process would.
    const pg = new Client({ connectionString: TEST_POSTGRES_URL });
    await pg.connect();
    try {
      await pg.query(`update "${schema.schema}".slot_leases set expires_at = 0 where slot = $1`, [slot]);
    } finally {
      await pg.end();
    }
    const usurper = (await owner.store.leases.acquire(slot, 1000, 60_000))!;
    expect(usurper.epoch).toBe(owner.cluster.slots.epochOf(slot) + 1);
    const second = owner.services.send.send(cmd('amy', peer, ChannelType.Person, 's-2', 'two'));
    // The store refuses the old epoch; the owner drops the slot instead of writing.
    await waitFor(async () => (!owner.cluster.slots.ownsWritable(slot) ? true : undefined));
    await owner.store.leases.release(slot, 1000, usurper.epoch);
    for (const n of nodes) n.cluster.slots.nudge();
    const outcome = await second;
    expect(outcome).toMatchObject({ reason: 1, messageSeq: 2 });
    const page = await owner.store.messages.range(channel, 1, 1, 100, 100, false);
    expect(page.messages.map((m) => [m.clientMsgNo, m.messageSeq, m.messageId])).toEqual([
      ['s-1', 1, first.messageId],
      ['s-2', 2, outcome.messageId],
    ]);
  }, 20_000);

  it('closes sessions on every node when device_quit revokes the token on one', async () => {
    const dee = session(7, 'dee');
    nodes[2]!.services.presence.add(dee.handle);
    await nodes[0]!.services.tokens.store('dee', 'dee-token', 1, 1, 'dee-d');
    await nodes[0]!.services.tokens.quit('dee', 1);
    await waitFor(async () => (dee.kicked.length === 1 ? true : undefined));
    expect(dee.kicked).toEqual([12]);
  });
});
