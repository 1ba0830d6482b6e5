import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonRpcClient } from '@parley/protocol/jsonrpc';
import { connectRpc, get, post, startTestServer, storeToken, type TestServer } from './helpers.ts';
import { STORE_DRIVERS, storeEnv } from '../../../test-support/stores.ts';

describe.each(STORE_DRIVERS)('store: %s', (driver) => {
  let t: TestServer;
  const store = storeEnv(driver);
  afterAll(() => store.drop());
  beforeAll(async () => {
    t = await startTestServer(store.env);
    for (const uid of ['i1', 'i2', 'i3']) await storeToken(t.api, uid, `tok-${uid}`);
  });
  afterAll(() => t.close());

  const legacy = (msg: string) => ({ msg, status: 400, code: expect.any(String) });

  describe('POST /route/batch', () => {
    it('answers one entry with every uid and the gateway addresses', async () => {
      const r = await post(t.api, '/route/batch', ['a', 'b']);
      expect(r.json).toEqual([{ uids: ['a', 'b'], tcp_addr: expect.stringMatching(/:\d+$/), ws_addr: t.ws, wss_addr: '' }]);
    });
    it('rejects a body that is not an array of uids', async () => {
      expect((await post(t.api, '/route/batch', { uids: ['a'] })).json).toEqual(legacy('数据格式有误！'));
    });
  });

  describe('POST /user/onlinestatus', () => {
    it('lists one entry per online session and an empty array as a status', async () => {
      const a = await connectRpc(t.ws, 'i1', 'tok-i1', 1, 'dev-1');
      const b = await connectRpc(t.ws, 'i1', 'tok-i1', 1, 'dev-2');
      const r = await post(t.api, '/user/onlinestatus', ['i1', 'i2']);
      expect(r.json).toEqual([
        { uid: 'i1', device_flag: 1, online: 1 },
        { uid: 'i1', device_flag: 1, online: 1 },
      ]);
      expect((await post(t.api, '/user/onlinestatus', [])).json).toEqual({ status: 200 });
      a.close();
      b.close();
    });
    it('rejects non-string uids', async () => {
      expect((await post(t.api, '/user/onlinestatus', [1, 2])).status).toBe(400);
    });
  });

  describe('system uids', () => {
    it('persists adds and removes, and lets a system uid send anywhere', async () => {
      expect((await post(t.api, '/user/systemuids_add', { uids: ['robot'] })).json).toEqual({ status: 200 });
      expect((await get(t.api, '/user/systemuids')).json).toEqual(['robot']);
      await post(t.api, '/channel', { channel_id: 'closed', channel_type: 2, subscribers: ['i1'] });
      const send = await post(t.api, '/message/send', { from_uid: 'robot', channel_id: 'closed', channel_type: 2, payload: 'aGk=' });
      expect(send.json.reason).toBe(1);
      expect((await post(t.api, '/user/systemuids_remove', { uids: ['robot'] })).json).toEqual({ status: 200 });
      expect((await get(t.api, '/user/systemuids')).json).toEqual([]);
      const refused = await post(t.api, '/message/send', { from_uid: 'robot', channel_id: 'closed', channel_type: 2, payload: 'aGk=' });
      expect(refused.json.reason).toBe(3);
    });
    it('keeps cache-only entries on this node', async () => {
      expect((await post(t.api, '/user/systemuids_add_to_cache', { uids: ['ghost'] })).json).toEqual({ status: 200 });
      expect((await get(t.api, '/user/systemuids')).json).toEqual(['ghost']);
      expect(await t.server.store.channels.listSystemUids()).toEqual([]);
      expect((await post(t.api, '/user/systemuids_remove_from_cache', { uids: ['ghost'] })).json).toEqual({ status: 200 });
      expect((await get(t.api, '/user/systemuids')).json).toEqual([]);
    });
    it('rejects uids that are not a list of strings', async () => {
      for (const path of [
        '/user/systemuids_add',
        '/user/systemuids_remove',
        '/user/systemuids_add_to_cache',
        '/user/systemuids_remove_from_cache',
      ]) {
        expect((await post(t.api, path, { uids: 'robot' })).json).toEqual(legacy('数据格式有误！'));
      }
    });
  });

  describe('connection kicks', () => {
    async function sessionId(uid: string): Promise<number> {
      const [s] = [...(t.server.presence.sessionsOf(uid) ?? [])];
      return s!.id;
    }
    it('/conn/kick sends DISCONNECT 12 then closes', async () => {
      const c = await connectRpc(t.ws, 'i2', 'tok-i2');
      const r = await post(t.api, '/conn/kick', { uid: 'i2', conn_id: await sessionId('i2'), node_id: 1 });
      expect(r.json).toEqual({ status: 200 });
      expect((await c.nextNotification('disconnect')).params.reasonCode).toBe(12);
      await c.closed;
    }, 10_000);
    it('/conn/remove closes without DISCONNECT', async () => {
      const c = await connectRpc(t.ws, 'i3', 'tok-i3');
      expect((await post(t.api, '/conn/remove', { uid: 'i3', conn_id: await sessionId('i3') })).json).toEqual({ status: 200 });
      expect((await c.closed).code).toBe(1000);
      expect(c.pending('disconnect')).toHaveLength(0);
    });
    it('reject a wrong node and a missing conn_id', async () => {
      expect((await post(t.api, '/conn/kick', { uid: 'i3', conn_id: 1, node_id: 7 })).json).toEqual(legacy('节点参数有误！'));
      expect((await post(t.api, '/conn/remove', { uid: 'i3' })).json).toEqual(legacy('数据格式有误！'));
      expect((await post(t.api, '/conn/kick', { uid: 'i3', conn_id: 1, pad: 'p'.repeat(70_000) })).status).toBe(413);
    });
  });

  describe('GET /route, POST /user/token, POST /user/device_quit', () => {
    it('route answers the gateway addresses', async () => {
      expect((await get(t.api, '/route')).json.ws_addr).toBe(t.ws);
    });
    it('token then device_quit -1 revokes every class', async () => {
      await storeToken(t.api, 'q', 'tq', 0);
      await storeToken(t.api, 'q', 'tq', 2);
      expect((await post(t.api, '/user/device_quit', { uid: 'q', device_flag: -1 })).json).toEqual({ status: 200 });
      for (const deviceFlag of [0, 2]) {
        const c = await JsonRpcClient.open(t.ws);
        expect((await c.request('connect', { uid: 'q', token: 'tq', deviceFlag })).error).toEqual({ code: 2, message: 'ReasonAuthFail' });
      }
      expect((await post(t.api, '/user/device_quit', { uid: 'q', device_flag: 5 })).status).toBe(400);
    });
  });
});
