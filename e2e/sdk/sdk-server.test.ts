import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, loadConfig, startServer, type RunningServer } from '@parley/server';
import { post as postTo } from '../../test-support/http.ts';
import { SdkConnectStatus, spawnSdkClient, type SdkClient } from './spawn-sdk-client.ts';

let server: RunningServer;
let dataDir: string;
let api: string;
let wsAddr: string;
const clients: SdkClient[] = [];

/** The JSON answer of a POST to the server's API. */
async function post(path: string, body: unknown): Promise<unknown> {
  return (await postTo(api, path, body)).json;
}

async function sdk(uid: string, token = `tok-${uid}`): Promise<SdkClient> {
  const c = await spawnSdkClient({ wsAddr, uid, token, deviceFlag: 1 });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'parley-sdk-'));
  const config = loadConfig(undefined, {
    PARLEY_NODE_DATA_DIR: dataDir,
    PARLEY_API_LISTEN_ADDR: '127.0.0.1:0',
    PARLEY_GATEWAY_WS_ADDR: '127.0.0.1:0',
    PARLEY_GATEWAY_TCP_ADDR: '127.0.0.1:0',
  });
  server = await startServer(config, createLogger('silent'));
  api = `http://127.0.0.1:${server.addresses.api.port}`;
  wsAddr = `ws://127.0.0.1:${server.addresses.ws.port}`;
  for (const uid of ['sdk-alice', 'sdk-bob']) {
    expect(await post('/user/token', { uid, token: `tok-${uid}`, device_flag: 1, device_level: 0 })).toEqual({ status: 200 });
  }
  expect(await post('/channel', { channel_id: 'sdk-group', channel_type: 2, subscribers: ['sdk-alice', 'sdk-bob'] })).toEqual({
    status: 200,
  });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the published wukongimjssdk against the real server', () => {
  it('connects with stored tokens and exchanges person messages both ways and a group message', async () => {
    const alice = await sdk('sdk-alice');
    const bob = await sdk('sdk-bob');
    await Promise.all([alice.connect(), bob.connect()]);

    const toBob = await alice.sendText('sdk-bob', 1, 'hello bob');
    expect(toBob.reasonCode).toBe(1);
    const atBob = await bob.nextMessage();
    expect(atBob).toMatchObject({
      fromUID: 'sdk-alice',
      channelId: 'sdk-alice',
      channelType: 1,
      messageSeq: toBob.messageSeq,
      messageID: toBob.messageID,
      text: 'hello bob',
    });
    expect(BigInt(atBob.messageID)).toBeGreaterThan(2n ** 53n);

    const toAlice = await bob.sendText('sdk-alice', 1, 'hello alice');
    expect(toAlice.messageSeq).toBe(toBob.messageSeq + 1);
    const atAlice = await alice.nextMessage();
    expect(atAlice).toMatchObject({
      fromUID: 'sdk-bob',
      channelId: 'sdk-bob',
      messageSeq: toAlice.messageSeq,
      messageID: toAlice.messageID,
      text: 'hello alice',
    });

    const inGroup = await alice.sendText('sdk-group', 2, 'hello group');
    const groupAtBob = await bob.nextMessage();
    expect(groupAtBob).toMatchObject({
      fromUID: 'sdk-alice',
      channelId: 'sdk-group',
      channelType: 2,
      messageSeq: inGroup.messageSeq,
      messageID: inGroup.messageID,
      text: 'hello group',
    });

    const history = (await post('/channel/messagesync', {
      login_uid: 'sdk-bob',
      channel_id: 'sdk-alice',
      channel_type: 1,
      pull_mode: 1,
    })) as {
      messages: Array<{ message_idstr: string; payload: string }>;
    };
    expect(history.messages.map((m) => m.message_idstr)).toEqual([toBob.messageID, toAlice.messageID]);
    expect(JSON.parse(Buffer.from(history.messages[0]!.payload, 'base64').toString())).toMatchObject({ type: 1, content: 'hello bob' });
  });

  it('reports a wrong token through the SDK’s own connect-status callback', async () => {
    const mallory = await sdk('sdk-alice', 'wrong-token');
    const failed = mallory.waitForStatus(SdkConnectStatus.ConnectFail);
    mallory.connect().catch(() => undefined);
    expect(await failed).toMatchObject({ status: SdkConnectStatus.ConnectFail, reasonCode: 2 });
  });
});
