import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WkprotoClient } from '@parley/protocol/wkproto';
import { connectRpc, startTestServer, storeToken, type TestServer } from './helpers.ts';

// gateway.idle_timeout: a connection that sends nothing for this long is closed, whatever it
// sends (a request, a ping, or only the recvacks of what it receives) keeps it open.
const IDLE_MS = 2000;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ PARLEY_GATEWAY_IDLE_TIMEOUT: `${IDLE_MS}ms` });
  for (const uid of ['i-quiet', 'i-pinger', 'i-reader', 'i-sender', 'w-quiet', 'w-pinger']) await storeToken(t.api, uid, `tok-${uid}`);
});
afterAll(() => t.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('gateway.idle_timeout', { timeout: 20_000 }, () => {
  it('closes a silent connection after the idle time (within the sweep), and keeps those that send anything', async () => {
    const quiet = await connectRpc(t.ws, 'i-quiet', 'tok-i-quiet');
    const quietSince = Date.now();
    let quietClosedAfter = -1;
    void quiet.closed.then((c) => {
      quietClosedAfter = Date.now() - quietSince;
      expect(c).toEqual({ code: 1008, reason: 'idle timeout' });
    });
    const pinger = await connectRpc(t.ws, 'i-pinger', 'tok-i-pinger');
    // The reader sends nothing but the recvack of each message it receives.
    const reader = await connectRpc(t.ws, 'i-reader', 'tok-i-reader');
    const sender = await connectRpc(t.ws, 'i-sender', 'tok-i-sender');
    const wkQuiet = new WkprotoClient({ url: t.tcp, uid: 'w-quiet', token: 'tok-w-quiet', deviceFlag: 1, version: 6 });
    await wkQuiet.connect();
    let wkQuietClosedAfter = -1;
    wkQuiet.on('close', () => (wkQuietClosedAfter = Date.now() - quietSince));
    const wkPinger = new WkprotoClient({ url: t.tcp, uid: 'w-pinger', token: 'tok-w-pinger', deviceFlag: 1, version: 6 });
    await wkPinger.connect();

    // Twice the idle time of traffic every 400 ms.
    const until = Date.now() + 2 * IDLE_MS + 500;
    let n = 0;
    while (Date.now() < until) {
      expect((await pinger.request('ping', null)).result).toBeNull();
      await wkPinger.ping();
      const r = await sender.request('send', { channelId: 'i-reader', channelType: 1, payload: { n }, clientMsgNo: `idle-${n++}` });
      expect((r.result as { reasonCode: number }).reasonCode).toBe(1);
      const recv = await reader.nextNotification('recv');
      reader.notify('recvack', { messageId: recv.params.messageId, messageSeq: recv.params.messageSeq });
      await sleep(400);
    }

    // The silent ones went at the idle time plus at most two sweeps (one to date the last
    // inbound byte, one to find it old enough); the others are still open.
    expect(quietClosedAfter).toBeGreaterThanOrEqual(IDLE_MS);
    expect(quietClosedAfter).toBeLessThan(IDLE_MS + 2500);
    expect(wkQuietClosedAfter).toBeGreaterThanOrEqual(IDLE_MS);
    expect(wkQuietClosedAfter).toBeLessThan(IDLE_MS + 2500);
    expect((await pinger.request('ping', null)).result).toBeNull();
    await wkPinger.ping();
    // The reader sent nothing else for more than the idle time and is still there.
    const last = await sender.request('send', { channelId: 'i-reader', channelType: 1, payload: { n }, clientMsgNo: `idle-${n}` });
    expect((last.result as { reasonCode: number }).reasonCode).toBe(1);
    expect((await reader.nextNotification('recv')).params.payload).toEqual({ n });
    for (const c of [pinger, reader, sender]) c.close();
    wkPinger.close();
  });
});
