import { afterEach, describe, expect, it } from 'vitest';
import { connectRpc, post, startTestServer, storeToken, type TestServer } from './helpers.ts';
import { call, waitFor } from './ops-helpers.ts';
import { startReceiver, type Answer, type Receiver } from './webhook-receiver.ts';

/** The other bounded queues feed the same pressure rules as the gateway's outbound buffers. */
type Item = { component: string; pool: string; queue: string; level: string; score: number; depth: number; capacity: number };
type Alert = { kind: string; component: string; message: string; severity: string; active: boolean };

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

async function node(env: Record<string, string>, answer?: Answer): Promise<{ t: TestServer; hook?: Receiver }> {
  const hook = answer ? await startReceiver(answer) : undefined;
  if (hook) cleanup.push(() => hook.close());
  const t = await startTestServer({
    PARLEY_TOP_COLLECT_INTERVAL: '100ms',
    PARLEY_STORE_SYNC: 'normal',
    ...(hook ? { PARLEY_WEBHOOK_HTTP_ADDR: hook.url } : {}),
    ...env,
  });
  cleanup.unshift(() => t.close());
  return { t, hook };
}

const snap = async (t: TestServer) => (await call(`${t.api}/top/v1/snapshot?window=2s&view=all`)).json;
const item = (s: { pressure?: { top?: Item[] } }, pool: string) => s?.pressure?.top?.find((i) => i.pool === pool);
/** The first snapshot where `pool` has reached at least `level`. */
const until = (t: TestServer, pool: string, levels: string[]) =>
  waitFor(async () => {
    const s = await snap(t);
    return levels.includes(item(s, pool)?.level ?? '') ? s : undefined;
  }, 10_000);
const send = (t: TestServer, n: number) =>
  Promise.all(
    Array.from({ length: n }, (_, i) =>
      post(t.api, '/message/send', { from_uid: 'a', channel_id: 'b', channel_type: 1, payload: Buffer.from(`m${i}`).toString('base64') }),
    ),
  );

describe('webhook queue', () => {
  it('scores queued requests against webhook.queue_size while the receiver does not answer', async () => {
    const { t, hook } = await node(
      {
        PARLEY_WEBHOOK_QUEUE_SIZE: '10',
        PARLEY_WEBHOOK_WORKERS: '1',
        PARLEY_WEBHOOK_MSG_NOTIFY_BATCH_MAX_ITEMS: '1',
        PARLEY_WEBHOOK_REQUEST_TIMEOUT: '60s',
        PARLEY_WEBHOOK_FOCUS_EVENTS: 'msg.notify',
      },
      () => 'hang',
    );
    await send(t, 1);
    await hook!.waitFor('msg.notify');
    await send(t, 8);
    const s = await until(t, 'dispatch', ['degraded']);
    expect(item(s, 'dispatch')).toMatchObject({ component: 'webhook', queue: 'webhook_queue', depth: 8, capacity: 10, score: 0.8 });
    expect((s.alerts.active as Alert[]).find((a) => a.component === 'webhook')).toMatchObject({
      kind: 'pressure_high',
      message: 'webhook/dispatch pressure',
      severity: 'error',
    });
    await send(t, 5);
    expect(item(await until(t, 'dispatch', ['critical']), 'dispatch')).toMatchObject({ depth: 10, score: 1 });
  });
});

describe('webhook retries (delivery retries)', () => {
  it('score requests being retried against webhook.workers and report them as delivery.retry_queue_depth', async () => {
    const { t, hook } = await node(
      {
        PARLEY_WEBHOOK_WORKERS: '2',
        PARLEY_WEBHOOK_MSG_NOTIFY_BATCH_MAX_ITEMS: '1',
        PARLEY_WEBHOOK_RETRY_MAX_ATTEMPTS: '20',
        PARLEY_WEBHOOK_FOCUS_EVENTS: 'msg.notify',
      },
      () => 500,
    );
    await send(t, 2);
    await hook!.waitFor('msg.notify', 4);
    const s = await until(t, 'retry', ['critical']);
    expect(item(s, 'retry')).toMatchObject({ component: 'webhook', queue: 'webhook_retry', depth: 2, capacity: 2, score: 1 });
    expect(s.delivery.retry_queue_depth).toBe(2);
    expect(s.verdict.reasons).toContain('webhook/retry pressure');
  });
});

describe('append queue', () => {
  it('records a burst committed between two samples (peak depth against 8 x store.batch_max_rows)', async () => {
    const { t } = await node({ PARLEY_STORE_BATCH_MAX_ROWS: '1' });
    await storeToken(t.api, 'a', 'tok-a');
    const a = await connectRpc(t.ws, 'a', 'tok-a');
    cleanup.push(async () => a.close());
    // Pipelined on one session: the whole burst is queued before the first commit.
    const acks = await Promise.all(
      Array.from({ length: 60 }, (_, i) => a.request('send', { channelId: 'b', channelType: 1, payload: { i } })),
    );
    expect(acks.every((r) => (r.result as { reasonCode: number }).reasonCode === 1)).toBe(true);
    const s = await until(t, 'append', ['busy', 'degraded', 'critical']);
    const append = item(s, 'append')!;
    expect(append).toMatchObject({ component: 'storage', queue: 'append_queue', capacity: 8 });
    expect(append.depth).toBeGreaterThanOrEqual(5);
    expect(s.storage.commit_queues[0].depth).toBe(append.depth);
  });
});

describe('delivery ack bindings', () => {
  it('count RECVs delivered and not yet acknowledged', async () => {
    const { t } = await node({});
    await storeToken(t.api, 'b', 'tok-b');
    const b = await connectRpc(t.ws, 'b', 'tok-b');
    cleanup.push(async () => b.close());
    await send(t, 3);
    for (let i = 0; i < 3; i++) await b.nextNotification('recv');
    const s = await waitFor(async () => {
      const x = await snap(t);
      return x?.delivery?.ack_bindings === 3 ? x : undefined;
    });
    expect(s.delivery.ack_bindings).toBe(3);
  });
});
