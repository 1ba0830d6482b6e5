import { expect } from 'vitest';
import { createLogger, loadConfig, startServer, type RunningServer } from '@parley/server';
import { post } from '../../server/test/helpers.ts';
import { v3ChannelId } from '../src/prepare/channel-id.ts';
import { v2ConversationSync, v3Deletes } from './v2-views.ts';

export function v3(id: string, type: number): string {
  const r = v3ChannelId(id, type);
  if ('problem' in r) throw new Error(r.problem);
  return r.id;
}

/** Starts the real server on an imported target (ephemeral ports, silent log). */
export async function startOn(target: string, nodeId: number, clusterId: string): Promise<{ server: RunningServer; api: string; ws: string }> {
  const env = {
    PARLEY_NODE_DATA_DIR: target, PARLEY_NODE_ID: String(nodeId), PARLEY_CLUSTER_ID: clusterId, PARLEY_API_LISTEN_ADDR: '127.0.0.1:0',
    PARLEY_GATEWAY_WS_ADDR: '127.0.0.1:0', PARLEY_GATEWAY_TCP_ADDR: '127.0.0.1:0', PARLEY_LOG_LEVEL: 'silent',
  };
  const server = await startServer(loadConfig(undefined, env), createLogger('silent'));
  return { server, api: `http://127.0.0.1:${server.addresses.api.port}`, ws: `ws://127.0.0.1:${server.addresses.ws.port}` };
}

const order = (a: { channel_type: number; channel_id: string }, b: { channel_type: number; channel_id: string }) =>
  a.channel_type - b.channel_type || (a.channel_id < b.channel_id ? -1 : a.channel_id > b.channel_id ? 1 : 0);

/**
 * For every user of the fixture: `/conversation/sync` answers 200 and lists
 * exactly what v2 lists (channel, last seq, unread), less what a v3
 * directory moves to `deletes` (disbanded channels, groups the user left);
 * command conversations are command bindings, and `/message/sync` returns
 * exactly the commands v2's would (above the conversation's read position).
 * `skip(channel_id, type)`: Parley channel ids the plan's policies changed (compared elsewhere).
 */
export async function checkConversations(server: RunningServer, api: string, exp: any, skip: (channelId: string, type: number) => boolean = () => false): Promise<number> {
  let compared = 0;
  const cmdChannels = new Map<string, any>(exp.message_channels.filter((c: any) => c.channel_id.endsWith('____cmd')).map((c: any) => [`${c.channel_type}:${c.channel_id}`, c]));
  for (const u of exp.users) {
    const wantCmd: string[] = [];
    for (const cv of u.conversations) {
      const id = v3(cv.channel_id, cv.channel_type);
      if (skip(id, cv.channel_type)) continue;
      if (cv.type === 1) {
        const live = await server.store.cmdBindings.listLive(u.uid, 10_000);
        expect(live.find((b) => b.channelId === id && b.channelType === cv.channel_type), `${u.uid} ${cv.channel_id}`).toMatchObject({ startSeq: 1, ackSeq: Number(cv.readed_to_msg_seq) });
        expect(await server.store.memberships.get(id, cv.channel_type, u.uid), `no membership of ${u.uid} in ${id}`).toBeUndefined();
        const log = cmdChannels.get(`${cv.channel_type}:${cv.channel_id}`);
        for (const m of log?.messages ?? []) if (Number(m.message_seq) > Number(cv.readed_to_msg_seq)) wantCmd.push(m.message_id);
        continue;
      }
      const m = await server.store.memberships.get(id, cv.channel_type, u.uid);
      expect(m, `${u.uid} ${cv.channel_id}`).toBeDefined();
      expect([m!.readSeq, m!.deletedToSeq], `${u.uid} ${cv.channel_id}`).toEqual([Number(cv.readed_to_msg_seq), Number(cv.deleted_at_msg_seq)]);
    }
    const sync = await post(api, '/conversation/sync', { uid: u.uid, msg_count: 1, limit: 500 });
    expect(sync.status, `${u.uid}: ${sync.text}`).toBe(200);
    const gone = v3Deletes(exp, u.uid);
    const want = v2ConversationSync(exp, u.uid).filter((i) => !gone(i) && !skip(i.channel_type === 1 ? v3Person(u.uid, i.channel_id) : i.channel_id, i.channel_type));
    const got = (sync.json as any[])
      .map((i) => ({ channel_id: i.channel_id, channel_type: i.channel_type, last_msg_seq: i.last_msg_seq, unread: i.unread }))
      .filter((i) => !skip(i.channel_type === 1 ? v3Person(u.uid, i.channel_id) : i.channel_id, i.channel_type));
    expect(got.sort(order), u.uid).toEqual(want.sort(order));
    compared += want.length;
    const cmd = await post(api, '/message/sync', { uid: u.uid, limit: 10_000 });
    expect(cmd.status, cmd.text).toBe(200);
    expect((cmd.json as any[]).map((x) => x.message_idstr).sort(), `${u.uid} commands`).toEqual(wantCmd.sort());
  }
  return compared;
}

/** The Parley id of the person chat between `uid` and `peer`. */
function v3Person(uid: string, peer: string): string {
  return v3(`${uid}@${peer}`, 1);
}
