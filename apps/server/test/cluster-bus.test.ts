/**
 * The cluster's bus pieces over the real NATS at 127.0.0.1:4222, each test
 * under its own cluster id: membership by heartbeat, the node-id check,
 * presence of uids on other nodes, and request/reply.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Bus, BusRequestError } from '../src/cluster/bus.ts';
import { Members } from '../src/cluster/members.ts';
import { RemotePresence } from '../src/cluster/remote-presence.ts';
import { createLogger } from '../src/log.ts';
import { waitFor } from '../../../test-support/http.ts';

const NATS = ['nats://127.0.0.1:4222'];
const log = createLogger('silent');
const open: Array<{ close(): Promise<void> | void }> = [];

afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function bus(clusterId: string): Promise<Bus> {
  const b = await Bus.connect(NATS, clusterId, 'test', log);
  open.push(b);
  return b;
}

function member(b: Bus, id: number, events = {}) {
  const m = new Members(b, () => ({ id, name: `n${id}`, api: `127.0.0.1:${5000 + id}`, ready: true, slots: [id] }), 600, log, events);
  open.push({ close: () => m.stop() });
  return m;
}

describe('cluster bus', () => {
  it('keeps clusters apart by subject prefix and answers requests', async () => {
    const id = `t-${randomUUID().slice(0, 8)}`;
    const a = await bus(id);
    const b = await bus(id);
    const other = await bus(`${id}-x`);
    b.subscribe(b.subject('echo'), (body) => ({ got: body }));
    await b.flush();
    expect(await a.request(a.subject('echo'), { n: 1 }, 2000)).toEqual({ got: { n: 1 } });
    const err = await other.request(other.subject('echo'), { n: 1 }, 2000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusRequestError);
    expect((err as BusRequestError).kind).toBe('no_responders');
    expect(a.connected).toBe(true);
  });

  it('sees nodes join and leave by heartbeat, and refuses a second live node with the same id', async () => {
    const id = `t-${randomUUID().slice(0, 8)}`;
    const left: number[] = [];
    const m1 = member(await bus(id), 1, { left: (m: { id: number }) => left.push(m.id) });
    const b2 = await bus(id);
    const m2 = member(b2, 2);
    await m1.assertIdFree();
    m1.start();
    m2.start();
    await waitFor(async () => (m1.liveIds().length === 2 && m2.liveIds().length === 2 ? true : undefined), 3000);
    expect(m1.peers()[0]).toMatchObject({ id: 2, name: 'n2', api: '127.0.0.1:5002', slots: [2] });

    const twin = member(await bus(id), 2);
    await expect(twin.assertIdFree()).rejects.toThrow(/node.id 2 is already used/);

    m2.stop();
    await waitFor(async () => (left.includes(2) ? true : undefined), 3000);
    expect(m1.liveIds()).toEqual([1]);
  });

  it('tells other nodes which uids are online where, and forgets a node that left', async () => {
    const id = `t-${randomUUID().slice(0, 8)}`;
    const b1 = await bus(id);
    const b2 = await bus(id);
    const local2 = new Set<string>(['carol']);
    const p1 = new RemotePresence(b1, 1, 'boot-1', () => [], 60_000, log);
    const p2 = new RemotePresence(b2, 2, 'boot-2', () => local2, 60_000, log);
    p1.start();
    p2.start();
    open.push({ close: () => p1.stop() }, { close: () => p2.stop() });
    await b1.flush();
    p2.announceAll();
    p2.localChanged('dave', true);
    await waitFor(async () => (p1.nodesOf('dave') && p1.nodesOf('carol') ? true : undefined), 3000);
    expect(p1.nodesOf('dave')).toEqual([2]);
    p2.localChanged('dave', false);
    await waitFor(async () => (p1.nodesOf('dave') === undefined ? true : undefined), 3000);
    expect(p1.counts()).toEqual({ '2': 1 });
    p1.nodeLeft({ id: 2 });
    expect(p1.nodesOf('carol')).toBeUndefined();
  });

  it('lets an unrefreshed presence entry lapse after its TTL', async () => {
    const id = `t-${randomUUID().slice(0, 8)}`;
    const b1 = await bus(id);
    const b2 = await bus(id);
    const p1 = new RemotePresence(b1, 1, 'boot-1', () => [], 300, log);
    const p2 = new RemotePresence(b2, 2, 'boot-2', () => [], 300, log);
    p1.start();
    open.push({ close: () => p1.stop() });
    await b1.flush();
    p2.localChanged('erin', true);
    p2.stop();
    await waitFor(async () => (p1.nodesOf('erin') ? true : undefined), 3000);
    await waitFor(async () => (p1.nodesOf('erin') === undefined ? true : undefined), 3000);
  });
});
