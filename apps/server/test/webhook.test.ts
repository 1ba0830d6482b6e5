import { createHmac } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { personChannelId } from '@parley/shared';
import { ConfigError, loadConfig } from '../src/config/config.ts';
import { connectRpc, post, rawMessageIds, startTestServer, storeToken, type TestServer } from './helpers.ts';
import { waitFor } from './ops-helpers.ts';
import { startReceiver, type Answer, type Receiver } from './webhook-receiver.ts';

const SECRET = 'hook-secret';
let cleanup: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

async function setup(answer: Answer, env: Record<string, string> = {}): Promise<{ t: TestServer; hook: Receiver }> {
  const hook = await startReceiver(answer);
  cleanup.push(() => hook.close());
  const t = await startTestServer({ PARLEY_WEBHOOK_HTTP_ADDR: hook.url, ...env });
  cleanup.unshift(() => t.close());
  return { t, hook };
}

const sign = (body: string) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
const parse = (body: string) => JSON.parse(body) as any;

/** A connected JSON-RPC sender whose `send()` resolves with its SENDACK latency, milliseconds. */
async function sender(t: TestServer): Promise<{ send(tag: string): Promise<number>; close(): void }> {
  await storeToken(t.api, 'alice', 'alice-token');
  const alice = await connectRpc(t.ws, 'alice', 'alice-token');
  return {
    async send(tag) {
      const start = performance.now();
      const r = await alice.request('send', { clientMsgNo: tag, channelId: 'bob', channelType: 1, payload: { type: 1, content: tag } });
      const ms = performance.now() - start;
      expect((r.result as { reasonCode: number }).reasonCode).toBe(1);
      return ms;
    },
    close: () => alice.close(),
  };
}

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)]!;

describe('webhooks', () => {
  it('posts msg.notify, msg.offline and user.onlinestatus with exact ids and an HMAC signature', async () => {
    const { t, hook } = await setup(() => 200, {
      PARLEY_WEBHOOK_SECRET: SECRET,
      PARLEY_WEBHOOK_MSG_NOTIFY_BATCH_MAX_WAIT: '30ms',
      PARLEY_WEBHOOK_ONLINE_STATUS_BATCH_MAX_WAIT: '30ms',
    });
    await storeToken(t.api, 'alice', 'alice-token');
    const alice = await connectRpc(t.ws, 'alice', 'alice-token', 1, 'alice-web');
    const [online] = await hook.waitFor('user.onlinestatus');
    expect(parse(online!.body)).toEqual([expect.stringMatching(/^alice-1-1-\d+-1-1$/)]);
    const sessionId = (parse(online!.body)[0] as string).split('-')[3];

    const sent = await post(t.api, '/message/send', {
      from_uid: 'alice',
      channel_id: 'bob',
      channel_type: 1,
      payload: 'aGk=',
      client_msg_no: 'w-1',
      topic: 'news',
      header: { red_dot: 1 },
    });
    const id = rawMessageIds(sent.text)[0]!;
    expect(BigInt(id)).toBeGreaterThan(2n ** 53n);
    const [notify] = await hook.waitFor('msg.notify');
    expect(rawMessageIds(notify!.body)).toEqual([id]);
    expect(parse(notify!.body)).toEqual([
      {
        header: { no_persist: 0, red_dot: 1, sync_once: 0 },
        setting: 0,
        topic: 'news',
        expire: 0,
        message_id: expect.any(Number),
        message_idstr: id,
        client_msg_no: 'w-1',
        message_seq: 1,
        from_uid: 'alice',
        channel_id: personChannelId('alice', 'bob'),
        channel_type: 1,
        timestamp: expect.any(Number),
        payload: 'aGk=',
      },
    ]);
    expect(Math.abs(parse(notify!.body)[0].timestamp - Date.now() / 1000)).toBeLessThan(60);
    // Alice is online (the HTTP send has no session), so only bob is offline.
    const [offline] = await hook.waitFor('msg.offline');
    expect(rawMessageIds(offline!.body)).toEqual([id]);
    expect(parse(offline!.body)).toMatchObject({ message_idstr: id, to_uids: ['bob'] });

    // A command: notify carries the stored `____cmd` id; no msg.offline.
    await post(t.api, '/message/send', {
      from_uid: 'alice',
      channel_id: 'bob',
      channel_type: 1,
      payload: 'Y21k',
      header: { sync_once: 1 },
    });
    const cmd = parse((await hook.waitFor('msg.notify', 2))[1]!.body)[0];
    expect(cmd).toMatchObject({ channel_id: `${personChannelId('alice', 'bob')}____cmd`, header: { sync_once: 1 }, message_seq: 1 });

    // More than 512 offline recipients: one gzip chunk of 512 and one plain chunk.
    const members = Array.from({ length: 600 }, (_, i) => `u${i}`);
    await post(t.api, '/channel', { channel_id: 'big', channel_type: 2, subscribers: members });
    await post(t.api, '/message/send', { from_uid: 'u0', channel_id: 'big', channel_type: 2, payload: 'Ymln' });
    const chunks = (await hook.waitFor('msg.offline', 3)).slice(1).map((r) => parse(r.body));
    const packed = chunks.find((c) => c.compress === 'gzip');
    expect(packed.to_uids).toBeUndefined();
    const unpacked = JSON.parse(gunzipSync(Buffer.from(packed.compress_to_uids, 'base64')).toString()) as string[];
    expect(unpacked).toHaveLength(512);
    const plain = chunks.find((c) => c.compress === undefined);
    expect(plain.to_uids).toHaveLength(88);
    expect(new Set([...unpacked, ...plain.to_uids])).toEqual(new Set(members));

    alice.close();
    const statuses = await hook.waitFor('user.onlinestatus', 2);
    expect(parse(statuses[1]!.body)).toEqual([`alice-1-0-${sessionId}-0-0`]);

    for (const r of hook.received) expect(r.headers['x-parley-signature']).toBe(sign(r.body));
    expect(hook.received.every((r) => r.headers['content-type'] === 'application/json')).toBe(true);
  });

  it('retries after a 500 with backoff, and sends only the focused events', async () => {
    const { t, hook } = await setup((n) => (n === 0 ? 500 : 200), {
      PARLEY_WEBHOOK_FOCUS_EVENTS: 'msg.notify',
      PARLEY_WEBHOOK_MSG_NOTIFY_BATCH_MAX_WAIT: '10ms',
      PARLEY_WEBHOOK_ONLINE_STATUS_BATCH_MAX_WAIT: '10ms',
    });
    await storeToken(t.api, 'alice', 'alice-token');
    const alice = await connectRpc(t.ws, 'alice', 'alice-token');
    const r = await alice.request('send', { clientMsgNo: 'r-1', channelId: 'bob', channelType: 1, payload: { type: 1, content: 'again' } });
    const id = (r.result as { messageId: string }).messageId;
    const [first, second] = await hook.waitFor('msg.notify', 2);
    expect(second!.body).toBe(first!.body);
    expect(rawMessageIds(second!.body)).toEqual([id]);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(200);
    expect(first!.headers['x-parley-signature']).toBeUndefined();
    alice.close();
    await waitFor(async () => (t.server.presence.connections === 0 ? true : undefined));
    // A later message (to offline dave: a msg.offline too, were it focused) whose msg.notify is
    // queued after anything the close could have queued; once it is in and the queue is idle,
    // everything queued before it has been sent.
    await post(t.api, '/message/send', { from_uid: 'carol', channel_id: 'dave', channel_type: 1, payload: 'bWFyaw==' });
    await hook.waitFor('msg.notify', 3);
    await waitFor(async () => {
      const s = t.server.webhooks!.stats;
      return s.queued === 0 && s.inFlight === 0 ? true : undefined;
    });
    // Offline bob and dave and the session's presence changes were not focused.
    expect(hook.received.map((x) => x.event)).toEqual(['msg.notify', 'msg.notify', 'msg.notify']);
    expect(t.server.webhooks!.stats).toMatchObject({ delivered: 2, retries: 1, failed: 0, dropped: 0 });
  });

  it('keeps sendack latency when the receiver never answers', async () => {
    // Both nodes run side by side and sends alternate, so machine noise hits both alike.
    const base = await startTestServer({ PARLEY_STORE_SYNC: 'normal' });
    cleanup.push(() => base.close());
    const { t, hook } = await setup(() => 'hang', { PARLEY_STORE_SYNC: 'normal', PARLEY_WEBHOOK_MSG_NOTIFY_BATCH_MAX_WAIT: '5ms' });
    const [plain, hooked] = [await sender(base), await sender(t)];
    const without: number[] = [];
    const withHooks: number[] = [];
    for (let i = 0; i < 250; i++) {
      const w = await plain.send(`b-${i}`);
      const h = await hooked.send(`h-${i}`);
      if (i < 50) continue; // warm-up
      without.push(w);
      withHooks.push(h);
    }
    plain.close();
    hooked.close();

    expect(hook.received.length).toBeGreaterThan(0);
    expect(t.server.webhooks!.stats.inFlight).toBeGreaterThan(0);
    expect(t.server.webhooks!.stats.delivered).toBe(0);
    // A send that waited for the receiver would take request_timeout (5 s).
    expect(Math.max(...withHooks)).toBeLessThan(1000);
    expect(withHooks.reduce((a, b) => a + b, 0)).toBeLessThan(10_000);
    expect(p99(withHooks)).toBeLessThan(Math.max(3 * p99(without), p99(without) + 50));
  });

  it('drops and counts requests when the queue is full instead of blocking sends', async () => {
    const { t } = await setup(() => 'hang', {
      PARLEY_WEBHOOK_QUEUE_SIZE: '2',
      PARLEY_WEBHOOK_WORKERS: '1',
      PARLEY_WEBHOOK_MSG_NOTIFY_BATCH_MAX_ITEMS: '1',
      PARLEY_WEBHOOK_FOCUS_EVENTS: 'msg.notify',
    });
    const alice = await sender(t);
    let total = 0;
    for (let i = 0; i < 50; i++) total += await alice.send(`full-${i}`);
    alice.close();
    expect(total).toBeLessThan(5000);
    const stats = t.server.webhooks!.stats;
    expect(stats.inFlight).toBe(1);
    expect(stats.queued).toBe(2);
    expect(stats.dropped).toBe(47);
    expect(stats.droppedItems).toBe(47);
  });

  it('rejects a webhook config it cannot use', () => {
    const bad = {
      PARLEY_WEBHOOK_HTTP_ADDR: 'ftp://x',
      PARLEY_WEBHOOK_FOCUS_EVENTS: 'msg.notify, msg.nope',
      PARLEY_WEBHOOK_REQUEST_TIMEOUT: '0s',
    };
    expect(() => loadConfig(undefined, bad)).toThrow(ConfigError);
    try {
      loadConfig(undefined, bad);
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(3);
    }
    const ok = loadConfig(undefined, {
      PARLEY_WEBHOOK_HTTP_ADDR: 'https://hooks.test/in?k=1',
      PARLEY_WEBHOOK_FOCUS_EVENTS: ' msg.offline ,user.onlinestatus',
    });
    expect(ok.webhook).toMatchObject({
      httpAddr: 'https://hooks.test/in?k=1',
      focusEvents: ['msg.offline', 'user.onlinestatus'],
      queueSize: 1024,
      workers: 16,
      msgNotifyBatchMaxWaitMs: 500,
      onlineStatusBatchMaxWaitMs: 2000,
      requestTimeoutMs: 5000,
      retryMaxAttempts: 3,
    });
  });
});
