/**
 * Three `parley start` processes on loopback as one cluster, sharing the real
 * PostgreSQL (a schema of their own) and NATS (a cluster id of their own):
 * users on different nodes talk both ways, a group's fan-out reaches members
 * on every node, `device_quit` on one node closes a session on another, and
 * offline sync answers the same from every node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonRpcClient } from '@parley/protocol/jsonrpc';
import { postgresReachable } from '@parley/store/testing';
import { startCluster, type TestCluster } from '../../../test-support/cluster.ts';
import { SlotTable } from '../src/cluster/slots.ts';
import { connectRpc, post, rawMessageIds, storeToken } from './helpers.ts';
import { waitFor } from '../../../test-support/http.ts';

const pgUp = await postgresReachable();
const payloadOf = (text: string) => Buffer.from(JSON.stringify({ type: 1, content: text })).toString('base64');

async function send(c: JsonRpcClient, params: Record<string, unknown>) {
  const r = await c.request('send', params);
  return r.result as { reasonCode: number; messageId: string; messageSeq: number };
}

describe.skipIf(!pgUp)('a three-node cluster', () => {
  let cluster: TestCluster;
  const clients: JsonRpcClient[] = [];
  const api = (id: number) => cluster.nodes.get(id)!.server.api;
  const ws = (id: number) => cluster.nodes.get(id)!.server.ws;

  beforeAll(async () => {
    cluster = await startCluster({ nodes: 3 });
    for (const uid of ['alice', 'bob', 'carol', 'dave']) await storeToken(api(1), uid, `${uid}-token`);
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    await cluster?.stop();
  }, 30_000);

  async function connect(node: number, uid: string): Promise<JsonRpcClient> {
    const c = await connectRpc(ws(node), uid, `${uid}-token`);
    clients.push(c);
    return c;
  }

  /** Waits until every other node knows `uid` is online on `node` (presence travels over NATS). */
  async function presenceSeen(node: number, count: number) {
    await waitFor(async () => {
      for (const other of [1, 2, 3].filter((n) => n !== node)) {
        const d = await cluster.debug(other);
        if ((d.remote_presence[String(node)] ?? 0) < count) return undefined;
      }
      return true;
    }, 5000);
  }

  it('spreads the slots over the three nodes and reports the cluster in /readyz, the top snapshot and /debug/cluster', async () => {
    // A node that starts first takes every free slot; the others get their share once they are stable.
    expect([...(await cluster.balanced(1))]).toEqual([
      [1, 4],
      [2, 4],
      [3, 4],
    ]);
    const d = await cluster.debug(1);
    expect(d.nodes.map((n: { node_id: number }) => n.node_id)).toEqual([1, 2, 3]);
    expect(d.slots).toHaveLength(12);
    for (const s of d.slots) {
      expect(s.epoch).toBeGreaterThanOrEqual(1);
      expect(s.expires_in_ms).toBeGreaterThan(0);
      expect(s.hash_slots.to - s.hash_slots.from).toBeGreaterThanOrEqual(20);
    }
    expect(d.controller_leader).toBe(1);
    for (const id of [1, 2, 3]) {
      const ready = await fetch(`${api(id)}/readyz`).then((r) => r.json());
      expect(ready).toEqual({ ready: true, parts: { routes: true, slots: true, channels: true, bus: true, slot_map: true } });
    }
    const top = await waitFor(async () => {
      const r = await fetch(`${api(2)}/top/v1/snapshot`);
      return r.status === 200 ? ((await r.json()) as { node: Record<string, unknown> & { state_revision: number } }) : undefined;
    }, 5000);
    expect(top.node).toMatchObject({ id: 2, ready: true, controller_leader: 1, slot_count: 12, hash_slot_count: 256 });
    expect(top.node.state_revision).toBeGreaterThanOrEqual(12);
  });

  it('lets users on different nodes exchange messages both ways, with exact 64-bit ids from one sequence', async () => {
    const alice = await connect(1, 'alice');
    await presenceSeen(1, 1);
    const bob = await connect(2, 'bob');
    await presenceSeen(2, 1);

    const first = await send(alice, { clientMsgNo: 'ab-1', channelId: 'bob', channelType: 1, payload: payloadOf('hi bob') });
    expect(first.reasonCode).toBe(1);
    expect(BigInt(first.messageId)).toBeGreaterThan(2n ** 53n);
    const atBob = await bob.nextNotification('recv');
    expect(atBob.params).toMatchObject({ messageId: first.messageId, messageSeq: first.messageSeq, fromUid: 'alice', channelId: 'alice' });

    const reply = await send(bob, { clientMsgNo: 'ba-1', channelId: 'alice', channelType: 1, payload: payloadOf('hi alice') });
    expect(reply.reasonCode).toBe(1);
    expect(reply.messageSeq).toBe(first.messageSeq + 1);
    const atAlice = await alice.nextNotification('recv');
    expect(atAlice.params).toMatchObject({ messageId: reply.messageId, messageSeq: reply.messageSeq, fromUid: 'bob', channelId: 'bob' });
    // The senders get no echo of their own messages.
    expect(alice.pending('recv')).toHaveLength(0);
    expect(bob.pending('recv')).toHaveLength(0);
  });

  it('fans a group message out to members on every node, whichever node sequences the group', async () => {
    const carol = await connect(3, 'carol');
    await presenceSeen(3, 1);
    const [alice, bob] = clients;
    const d = await cluster.debug(1);
    const table = new SlotTable(12, 256);
    const ownerOf = (id: string) => d.slots[table.slotOf(id)].leader_id as number;
    // One group sequenced by each node, so sends are forwarded from the other two.
    const groups = [1, 2, 3].map((owner) => {
      for (let i = 0; ; i++) if (ownerOf(`team-${i}`) === owner) return `team-${i}`;
    });
    for (const [i, group] of groups.entries()) {
      const created = await post(api(((i + 1) % 3) + 1), '/channel', {
        channel_id: group,
        channel_type: 2,
        subscribers: ['alice', 'bob', 'carol'],
      });
      expect(created.json).toEqual({ status: 200 });
      const sent = await send(alice!, { clientMsgNo: `${group}-1`, channelId: group, channelType: 2, payload: payloadOf(`to ${group}`) });
      expect(sent).toMatchObject({ reasonCode: 1, messageSeq: 1 });
      for (const member of [bob!, carol]) {
        expect((await member.nextNotification('recv')).params).toMatchObject({
          messageId: sent.messageId,
          channelId: group,
          fromUid: 'alice',
        });
      }
      expect(alice!.pending('recv')).toHaveLength(0);
    }
  });

  it('closes a session on another node when device_quit revokes its token', async () => {
    const bob = clients[1]!;
    const r = await post(api(1), '/user/device_quit', { uid: 'bob', device_flag: 1 });
    expect(r.json).toEqual({ status: 200 });
    expect((await bob.nextNotification('disconnect')).params).toEqual({ reasonCode: 12, reason: 'login in other device' });
    expect((await bob.closed).code).toBe(1000);
    await storeToken(api(3), 'bob', 'bob-token');
  });

  it('answers offline sync the same from every node', async () => {
    const alice = clients[0]!;
    const sent: Array<{ messageId: string; messageSeq: number }> = [];
    for (let i = 0; i < 5; i++)
      sent.push(await send(alice, { clientMsgNo: `ad-${i}`, channelId: 'dave', channelType: 1, payload: payloadOf(`m${i}`) }));
    expect(sent.map((s) => s.messageSeq)).toEqual([1, 2, 3, 4, 5]);
    for (const id of [1, 2, 3]) {
      const sync = await post(api(id), '/channel/messagesync', {
        login_uid: 'dave',
        channel_id: 'alice',
        channel_type: 1,
        pull_mode: 1,
        limit: 100,
      });
      expect(sync.status).toBe(200);
      expect(rawMessageIds(sync.text)).toEqual(sent.map((s) => s.messageId));
      expect(sync.json.messages.map((m: { message_seq: number }) => m.message_seq)).toEqual([1, 2, 3, 4, 5]);
      const convs = await post(api(id), '/conversation/sync', { uid: 'dave', msg_count: 1 });
      expect(convs.status).toBe(200);
      expect(convs.json.find((c: { channel_id: string }) => c.channel_id === 'alice')).toMatchObject({ unread: 5, last_msg_seq: 5 });
    }
    // Dave comes online on node 3 and gets a new message from alice at node 1 in real time.
    const dave = await connect(3, 'dave');
    await presenceSeen(3, 2);
    const live = await send(alice, { clientMsgNo: 'ad-live', channelId: 'dave', channelType: 1, payload: payloadOf('now') });
    expect((await dave.nextNotification('recv')).params).toMatchObject({ messageId: live.messageId, messageSeq: 6 });
  });
});
