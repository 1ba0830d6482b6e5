import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createLogger, loadConfig, startServer } from '@parley/server';
import { connectRpc, post } from '../../server/test/helpers.ts';
import { v3ChannelId } from '../src/prepare/channel-id.ts';
import { expected, fixtureDir, hasFixture, parleyctl, tempRoot, treeHash, writePlan } from './helpers.ts';

const FIXTURES = ['basic-closed', 'basic-crash', 'basic-flushed'];

function v3(id: string, type: number): string {
  const r = v3ChannelId(id, type);
  if ('problem' in r) throw new Error(r.problem);
  return r.id;
}

/** A live member with no deletion floor, to pull a channel's whole history as. */
function readerOf(dbFile: string, channelId: string, type: number): string | undefined {
  const db = new Database(dbFile, { readonly: true });
  try {
    const row = db.prepare('select uid from memberships where channel_id = ? and channel_type = ? and removed = 0 order by deleted_to_seq, uid limit 1').get(channelId, type) as { uid: string } | undefined;
    return row?.uid;
  } finally {
    db.close();
  }
}

describe.each(FIXTURES)('parleyctl migrate, end to end: %s', (name) => {
  const present = hasFixture(name);
  const root = tempRoot();
  const source = join(fixtureDir(name), 'datadir');
  const plan = writePlan(root, source);
  const target = join(root, 'target');
  const outputs: string[] = [];
  const before = present ? treeHash(source) : '';

  it.runIf(present)('runs prepare, export, import and verify from the CLI', async () => {
    const prep = await parleyctl(['migrate', 'prepare', '--plan', plan, '--workspace', join(root, 'ws-prepare')]);
    outputs.push(prep.stdout, prep.stderr);
    expect(prep.code, prep.stdout).toBe(0);
    expect(prep.report.status).toBe('prepared');
    expect(prep.report.blockers).toEqual([]);
    expect(prep.report.selection_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(prep.stderr).toMatch(/messages so far \(\d+\/s\)/);
    const exp = await parleyctl(['migrate', 'export', '--plan', plan, '--workspace', join(root, 'ws-prepare'), '--archive', join(root, 'archive')]);
    outputs.push(exp.stdout, exp.stderr);
    expect(exp.code, exp.stdout).toBe(0);
    expect(exp.report.complete).toBe(true);
    const imp = await parleyctl(['migrate', 'import', '--plan', plan, '--workspace', join(root, 'ws-import'), '--archive', join(root, 'archive')]);
    outputs.push(imp.stdout, imp.stderr);
    expect(imp.code, imp.stdout).toBe(0);
    expect(imp.report.status).toBe('imported');
    const ver = await parleyctl(['migrate', 'verify', '--plan', plan, '--workspace', join(root, 'ws-verify'), '--archive', join(root, 'archive')]);
    outputs.push(ver.stdout, ver.stderr);
    expect(ver.code, ver.stdout).toBe(0);
    expect(ver.report.status).toBe('offline_verified');
    expect(ver.report.cutover_ready).toBe(false);
    expect(ver.report.selection_digest).toBe(prep.report.selection_digest);
    const total = expected(name).message_channels.reduce((n: number, c: any) => n + c.messages.length, 0);
    expect(ver.report.verified_message_replicas).toBe(total * 1);
  }, 60_000);

  it.runIf(present)('leaves the source byte-identical and prints no token', () => {
    expect(treeHash(source)).toBe(before);
    const text = outputs.join('\n');
    for (const u of expected(name).users) for (const d of u.devices) if (d.token !== '') expect(text).not.toContain(d.token);
  });

  it.runIf(present)('serves the imported data from the real server', async () => {
    const exp = expected(name);
    const readers = new Map<string, string | undefined>();
    for (const c of exp.message_channels) readers.set(`${c.channel_type}:${c.channel_id}`, readerOf(join(target, 'parley.db'), v3(c.channel_id, c.channel_type), c.channel_type));
    const env = {
      PARLEY_NODE_DATA_DIR: target, PARLEY_NODE_ID: '7', PARLEY_CLUSTER_ID: 'parley-test', PARLEY_API_LISTEN_ADDR: '127.0.0.1:0',
      PARLEY_GATEWAY_WS_ADDR: '127.0.0.1:0', PARLEY_GATEWAY_TCP_ADDR: '127.0.0.1:0', PARLEY_LOG_LEVEL: 'silent',
    };
    const server = await startServer(loadConfig(undefined, env), createLogger('silent'));
    try {
      const api = `http://127.0.0.1:${server.addresses.api.port}`;
      const ws = `ws://127.0.0.1:${server.addresses.ws.port}`;
      const banned = new Set(exp.channels.filter((c: any) => c.channel_type === 1 && c.info?.ban).map((c: any) => c.channel_id));
      for (const u of exp.users) {
        for (const d of u.devices) {
          if (d.token === '') continue;
          if (banned.has(u.uid)) {
            // v2 refuses a banned user's connection whatever the token; so does Parley (reason 19 Ban)
            await expect(connectRpc(ws, u.uid, d.token, Number(d.device_flag))).rejects.toThrow(/"error":\{"code":19,"message":"ReasonBan"\}/);
            continue;
          }
          const client = await connectRpc(ws, u.uid, d.token, Number(d.device_flag));
          client.close();
          await expect(connectRpc(ws, u.uid, `${d.token}-wrong`, Number(d.device_flag))).rejects.toThrow(/connect failed/);
        }
      }
      for (const c of exp.message_channels) {
        const id = v3(c.channel_id, c.channel_type);
        const disbanded = exp.channels.some((x: any) => x.channel_id === c.channel_id && x.channel_type === c.channel_type && x.info?.disband);
        if (id.endsWith('____cmd') || disbanded) {
          // the v3 pull API serves neither command logs nor disbanded channels: read them through the server's store
          const page = await server.store.messages.range(id, c.channel_type, 1, Number.MAX_SAFE_INTEGER, 10_000, false);
          expect(page.messages.map((m) => m.messageId.toString())).toEqual(c.messages.map((m: any) => m.message_id));
          continue;
        }
        const login = readers.get(`${c.channel_type}:${c.channel_id}`) ?? c.channel_id.split('@')[0];
        const channelId = c.channel_type === 1 ? (c.channel_id.split('@').find((x: string) => x !== login) ?? login) : c.channel_id;
        const r = await post(api, '/channel/messagesync', { login_uid: login, channel_id: channelId, channel_type: c.channel_type, start_message_seq: 0, end_message_seq: 0, limit: 10_000, pull_mode: 1 });
        expect(r.status, r.text).toBe(200);
        const got = r.json.messages.map((m: any) => ({
          id: m.message_idstr, seq: m.message_seq, cmn: m.client_msg_no, from: m.from_uid, payload: m.payload, ts: m.timestamp, red: m.header.red_dot,
        }));
        const want = c.messages.map((m: any) => ({
          id: m.message_id, seq: m.message_seq, cmn: m.client_msg_no, from: m.from_uid, payload: m.payload_base64, ts: m.timestamp, red: m.header.red_dot ? 1 : 0,
        }));
        expect(got, `${c.channel_id}`).toEqual(want);
      }
      for (const u of exp.users) {
        for (const cv of u.conversations) {
          const m = await server.store.memberships.get(v3(cv.channel_id, cv.channel_type), cv.channel_type, u.uid);
          expect(m, `${u.uid} ${cv.channel_id}`).toBeDefined();
          expect([m!.readSeq, m!.deletedToSeq]).toEqual([Number(cv.readed_to_msg_seq), Number(cv.deleted_at_msg_seq)]);
          expect(m!.activatedAt).toBeGreaterThan(0);
        }
      }
      const group = exp.message_channels.find((c: any) => c.channel_id === 'group01');
      const sender = readers.get('2:group01')!;
      const sent = await post(api, '/message/send', { from_uid: sender, channel_id: 'group01', channel_type: 2, payload: Buffer.from('{"type":1,"content":"after migration"}').toString('base64') });
      expect(sent.status, sent.text).toBe(200);
      expect(sent.json.message_seq).toBeGreaterThan(Number(group.last_msg_seq));
    } finally {
      await server.close();
    }
  }, 60_000);
});
