import { expect } from 'vitest';
import { openPostgresStoreReader, openStoreReader, type StoreReader } from '@parley/store';
import { post } from '../../../test-support/http.ts';
import { spawnServer, testEnv } from '../../../test-support/parley.ts';
import { connectRpc } from '../../../test-support/realtime.ts';
import type { MappingRecord } from '../src/v2/records.ts';
import { v3ChannelId } from '../src/prepare/channel-id.ts';
import { v2ChatOrder, v2ConversationSync, v3Deletes } from './v2-views.ts';

export function v3(id: string, type: number): string {
  const r = v3ChannelId(id, type);
  if ('problem' in r) throw new Error(r.problem);
  return r.id;
}

/** A `parley` process serving an imported target, and the target's store opened read-only beside it. */
export interface ServedTarget {
  api: string;
  ws: string;
  /** Reads what the server sees (its writes included) through the store's repositories. */
  store: StoreReader;
  close(): Promise<void>;
}

/** The env `parley start` needs for an imported target: its node id and cluster id, ephemeral ports, no log. */
export function targetEnv(target: string, nodeId: number, clusterId: string, extra: Record<string, string> = {}): Record<string, string> {
  return testEnv(target, { PARLEY_NODE_ID: String(nodeId), PARLEY_CLUSTER_ID: clusterId, ...extra });
}

/**
 * Starts the real server (`parley start`, a child process) on an imported
 * target; with `postgres`, on that PostgreSQL store (`env` = the
 * `PARLEY_STORE_*` and `PARLEY_CLUSTER_*` keys the target needs).
 */
export async function startOn(
  target: string,
  nodeId: number,
  clusterId: string,
  postgres?: { url: string; env: Record<string, string> },
): Promise<{ server: ServedTarget; api: string; ws: string }> {
  const server = await spawnServer(targetEnv(target, nodeId, clusterId, postgres?.env));
  let store: StoreReader;
  try {
    store = postgres ? await openPostgresStoreReader(postgres.url) : await openStoreReader(target);
  } catch (err) {
    await server.stop();
    throw err;
  }
  const served: ServedTarget = {
    api: server.api,
    ws: server.ws,
    store,
    async close() {
      await store.close();
      const code = await server.stop();
      if (code !== 0) throw new Error(`parley exited with ${code} (${server.proc.signalCode}):\n${server.stderr()}`);
    },
  };
  return { server: served, api: server.api, ws: server.ws };
}

const order = (a: { channel_type: number; channel_id: string }, b: { channel_type: number; channel_id: string }) =>
  a.channel_type - b.channel_type || (a.channel_id < b.channel_id ? -1 : a.channel_id > b.channel_id ? 1 : 0);

/**
 * For every user of the fixture: `/conversation/sync` answers 200 and lists
 * exactly what v2 lists (channel, last seq, unread), less what a v3
 * directory moves to `deletes` (disbanded channels, groups the user left);
 * command conversations are command bindings, and `/message/sync` returns
 * exactly the commands v2's would (above the conversation's read position).
 * `skip(channel_id, type)`: Parley channel ids the plan's policies changed (compared elsewhere); `limit`: the v2 list limit.
 */
export async function checkConversations(
  server: ServedTarget,
  api: string,
  exp: any,
  skip: (channelId: string, type: number) => boolean = () => false,
  limit = 1000,
): Promise<number> {
  let compared = 0;
  const cmdChannels = new Map<string, any>(
    exp.message_channels.filter((c: any) => c.channel_id.endsWith('____cmd')).map((c: any) => [`${c.channel_type}:${c.channel_id}`, c]),
  );
  const tails = new Map<string, string>(exp.message_channels.map((c: any) => [`${c.channel_type}:${c.channel_id}`, c.last_msg_seq]));
  for (const u of exp.users) {
    const wantCmd: string[] = [];
    const beyond = new Set(
      v2ChatOrder(u)
        .slice(limit)
        .map((c: any) => `${c.channel_type}:${c.channel_id}`),
    );
    for (const cv of u.conversations) {
      const id = v3(cv.channel_id, cv.channel_type);
      if (skip(id, cv.channel_type)) continue;
      if (cv.type === 1) {
        const live = await server.store.repositories.cmdBindings.listLive(u.uid, 10_000);
        expect(
          live.find((b) => b.channelId === id && b.channelType === cv.channel_type),
          `${u.uid} ${cv.channel_id}`,
        ).toMatchObject({ startSeq: 1, ackSeq: Number(cv.readed_to_msg_seq) });
        expect(
          await server.store.repositories.memberships.get(id, cv.channel_type, u.uid),
          `no membership of ${u.uid} in ${id}`,
        ).toBeUndefined();
        const log = cmdChannels.get(`${cv.channel_type}:${cv.channel_id}`);
        for (const m of log?.messages ?? []) if (Number(m.message_seq) > Number(cv.readed_to_msg_seq)) wantCmd.push(m.message_id);
        continue;
      }
      const m = await server.store.repositories.memberships.get(id, cv.channel_type, u.uid);
      expect(m, `${u.uid} ${cv.channel_id}`).toBeDefined();
      // beyond the list limit v2 hid the conversation: the target hides it up to the tail
      const hidden = beyond.has(`${cv.channel_type}:${cv.channel_id}`) ? Number(tails.get(`${cv.channel_type}:${cv.channel_id}`) ?? 0) : 0;
      expect([m!.readSeq, m!.deletedToSeq], `${u.uid} ${cv.channel_id}`).toEqual([
        Number(cv.readed_to_msg_seq),
        Math.max(Number(cv.deleted_at_msg_seq), hidden),
      ]);
    }
    const sync = await post(api, '/conversation/sync', { uid: u.uid, msg_count: 1, limit: 500 });
    expect(sync.status, `${u.uid}: ${sync.text}`).toBe(200);
    const gone = v3Deletes(exp, u.uid);
    const want = v2ConversationSync(exp, u.uid, limit).filter(
      (i) => !gone(i) && !skip(i.channel_type === 1 ? v3Person(u.uid, i.channel_id) : i.channel_id, i.channel_type),
    );
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

/** Every stored token connects (a wrong one does not); a banned user is refused whatever the token, as in v2 (reason 19). */
export async function checkTokens(ws: string, exp: any): Promise<void> {
  const banned = new Set(exp.channels.filter((c: any) => c.channel_type === 1 && c.info?.ban).map((c: any) => c.channel_id));
  for (const u of exp.users) {
    for (const d of u.devices) {
      if (d.token === '') continue;
      if (banned.has(u.uid)) {
        await expect(connectRpc(ws, u.uid, d.token, Number(d.device_flag))).rejects.toThrow(/"error":\{"code":19,"message":"ReasonBan"\}/);
        continue;
      }
      const client = await connectRpc(ws, u.uid, d.token, Number(d.device_flag));
      client.close();
      await expect(connectRpc(ws, u.uid, `${d.token}-wrong`, Number(d.device_flag))).rejects.toThrow(/connect failed/);
    }
  }
}

/** A live member with no deletion floor, to pull a channel's whole history as. */
async function readerOf(store: StoreReader, channelId: string, type: number): Promise<string | undefined> {
  let best: { uid: string; deleted: number } | undefined;
  for await (const page of store.snapshot.scan('memberships')) {
    for (const m of page) {
      if (m.channel_id !== channelId || m.channel_type !== type || m.removed !== 0) continue;
      const deleted = Number(m.deleted_to_seq);
      if (!best || deleted < best.deleted || (deleted === best.deleted && m.uid < best.uid)) best = { uid: m.uid, deleted };
    }
  }
  return best?.uid;
}

/**
 * Every message channel's history as the server serves it (`/channel/messagesync`
 * as a member; command logs and disbanded channels, which v3 pulls refuse,
 * through the store): ids, seqs, client message numbers, senders, payloads,
 * times and red dots exactly as `exp` says.
 */
export async function checkMessages(server: ServedTarget, api: string, exp: any): Promise<number> {
  let n = 0;
  for (const c of exp.message_channels) {
    const id = v3(c.channel_id, c.channel_type);
    const disbanded = exp.channels.some((x: any) => x.channel_id === c.channel_id && x.channel_type === c.channel_type && x.info?.disband);
    if (id.endsWith('____cmd') || disbanded) {
      const page = await server.store.repositories.messages.range(id, c.channel_type, 1, Number.MAX_SAFE_INTEGER, 10_000, false);
      expect(
        page.messages.map((m) => [m.messageSeq, m.messageId.toString()]),
        c.channel_id,
      ).toEqual(c.messages.map((m: any) => [Number(m.message_seq), m.message_id]));
      n += c.messages.length;
      continue;
    }
    const login = (await readerOf(server.store, id, c.channel_type)) ?? c.channel_id.split('@')[0];
    const channelId = c.channel_type === 1 ? (c.channel_id.split('@').find((x: string) => x !== login) ?? login) : c.channel_id;
    const r = await post(api, '/channel/messagesync', {
      login_uid: login,
      channel_id: channelId,
      channel_type: c.channel_type,
      start_message_seq: 0,
      end_message_seq: 0,
      limit: 10_000,
      pull_mode: 1,
    });
    expect(r.status, r.text).toBe(200);
    const got = r.json.messages.map((m: any) => ({
      id: m.message_idstr,
      seq: m.message_seq,
      cmn: m.client_msg_no,
      from: m.from_uid,
      payload: m.payload,
      ts: m.timestamp,
      red: m.header.red_dot,
    }));
    const want = c.messages.map((m: any) => ({
      id: m.message_id,
      seq: Number(m.message_seq),
      cmn: m.client_msg_no,
      from: m.from_uid,
      payload: m.payload_base64,
      ts: m.timestamp,
      red: m.header.red_dot ? 1 : 0,
    }));
    expect(got, `${c.channel_id}`).toEqual(want);
    n += want.length;
  }
  return n;
}

/**
 * `expected.json` as the target must show it after `compact_sequences`: the
 * rows the mapping leaves out (target seq 0) gone, every seq the target seq,
 * every read/delete position and tail its boundary.
 */
export function applyMapping(exp: any, mapping: MappingRecord[]): any {
  const out = structuredClone(exp);
  const byChannel = new Map<string, MappingRecord[]>();
  for (const m of mapping)
    byChannel.set(`${m.channel_type}:${m.v2_channel_id}`, [...(byChannel.get(`${m.channel_type}:${m.v2_channel_id}`) ?? []), m]);
  const boundary = (type: number, ch: string, pos: number) => {
    const rows = byChannel.get(`${type}:${ch}`);
    if (!rows || pos <= 0) return pos;
    return rows.filter((r) => r.v2_seq <= pos && r.target_seq > 0).length;
  };
  for (const c of out.message_channels) {
    const rows = new Map((byChannel.get(`${c.channel_type}:${c.channel_id}`) ?? []).map((r) => [r.v2_seq, r]));
    c.messages = c.messages.filter((m: any) => (rows.get(Number(m.message_seq))?.target_seq ?? 1) > 0);
    for (const m of c.messages) {
      const r = rows.get(Number(m.message_seq));
      if (r) m.message_seq = r.target_seq;
    }
    c.last_msg_seq = String(boundary(c.channel_type, c.channel_id, Number(c.last_msg_seq)));
  }
  for (const u of out.users) {
    for (const cv of u.conversations) {
      cv.readed_to_msg_seq = String(boundary(cv.channel_type, cv.channel_id, Number(cv.readed_to_msg_seq)));
      cv.deleted_at_msg_seq = String(boundary(cv.channel_type, cv.channel_id, Number(cv.deleted_at_msg_seq)));
    }
  }
  return out;
}
