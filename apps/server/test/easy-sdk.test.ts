import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './ops-helpers.ts';
import { startTestServer, storeToken, type TestServer } from './helpers.ts';
import { EasySdkStyleClient } from './easy-sdk-client.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await storeToken(t.api, 'ez-alice', 'tok-alice');
  await storeToken(t.api, 'ez-bob', 'tok-bob');
});
afterAll(() => t.close());

describe('an EasySDK-style JSON-RPC client', { timeout: 15_000 }, () => {
  it('sees an error, not a connection, when its token is wrong', async () => {
    const c = new EasySdkStyleClient({ url: t.ws, uid: 'ez-alice', token: 'wrong' });
    await expect(c.connect()).rejects.toEqual({ code: 2, message: 'ReasonAuthFail' });
    expect(c.isConnected).toBe(false);
    expect(c.events.map(([e]) => e)).not.toContain('connect');
    expect(c.events).toContainEqual(['error', { code: 2, message: 'ReasonAuthFail' }]);
    // The server also says why before it closes: the disconnect notification EasySDK reports.
    expect(c.events).toContainEqual(['disconnect', { reasonCode: 2, reason: 'ReasonAuthFail' }]);
    await waitFor(async () => (c.events.some(([e]) => e === 'disconnect') ? true : undefined));
    expect(c.isConnected).toBe(false);
    await expect(c.send('ez-bob', 1, { type: 1 })).rejects.toThrow(/Not connected/);
  });

  it('connects with the right token, sends, and receives (acking) a message', async () => {
    const alice = new EasySdkStyleClient({ url: t.ws, uid: 'ez-alice', token: 'tok-alice' });
    const bob = new EasySdkStyleClient({ url: t.ws, uid: 'ez-bob', token: 'tok-bob' });
    await alice.connect();
    await bob.connect();
    expect(alice.isConnected).toBe(true);
    const got = new Promise((resolve) => bob.on('message', resolve));
    expect(await alice.send('ez-bob', 1, { type: 1, content: 'hi' })).toMatchObject({ reasonCode: 1 });
    expect(await got).toMatchObject({ fromUid: 'ez-alice', channelId: 'ez-alice', payload: { type: 1, content: 'hi' } });
    alice.close();
    bob.close();
  });
});
