import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TopSnapshot } from '@parley/shared';
import { checkReadiness } from '../src/observe/readiness.ts';
import { openEmbeddedStore } from '@parley/store';
import { holdWriteLock } from '@parley/store/testing';
import { post, startTestServer, tempDir, type TestServer } from './helpers.ts';
import { call, schemaErrors, waitFor } from './ops-helpers.ts';
import { startReceiver } from './webhook-receiver.ts';

const READY = { routes: true, slots: true, channels: true };
type Alert = {
  kind: string;
  component: string;
  message: string;
  severity: string;
  active: boolean;
  evidence?: Record<string, string>;
  resolved_at?: string;
};

describe('readiness parts routes, slots, channels', () => {
  let t: TestServer;
  const snap = async () => (await call(`${t.api}/top/v1/snapshot?window=2s&view=runtime`)).json;

  beforeAll(async () => {
    t = await startTestServer({ PARLEY_TOP_COLLECT_INTERVAL: '100ms' });
    await waitFor(async () => ((await call(`${t.api}/top/v1/snapshot?window=2s`)).status === 200 ? true : undefined));
  });
  afterAll(() => t.close());

  it('are all true on a running node, in /readyz and the snapshot', async () => {
    const r = await call(`${t.api}/readyz`);
    expect([r.status, r.json]).toEqual([200, { ready: true, parts: READY }]);
    const s = await snap();
    expect(s.node).toMatchObject({ ready: true, ready_parts: READY });
    expect(schemaErrors(TopSnapshot, s)).toEqual([]);
  });

  it('turn channels false while another connection holds the store write lock, and back', async () => {
    // A second, real SQLite connection (as a backup tool or an operator's shell would) takes the write lock.
    const other = holdWriteLock(t.dataDir);
    try {
      const r = await call(`${t.api}/readyz`);
      expect([r.status, r.json]).toEqual([
        503,
        {
          ready: false,
          reason: 'channel not ready: store writes failing (busy: SQLITE_BUSY database is locked)',
          parts: { routes: true, slots: true, channels: false },
        },
      ]);
      const s = await waitFor(async () => {
        const x = await snap();
        return x?.node?.ready === false ? x : undefined;
      });
      expect(s.node.ready_parts).toEqual({ routes: true, slots: true, channels: false });
      expect(s.verdict).toEqual({ level: 'critical', summary: 'cluster runtime is not ready', reasons: ['channel not ready'] });
      const alert = s.alerts.active.find((a: Alert) => a.kind === 'ready_part_down');
      expect(alert).toMatchObject({
        severity: 'critical',
        component: 'channel',
        message: 'channel not ready',
        evidence: { ready_part: 'channels', ready: 'false' },
        active: true,
      });
      expect(schemaErrors(TopSnapshot, s)).toEqual([]);
    } finally {
      other.release();
    }
    expect((await call(`${t.api}/readyz`)).status).toBe(200);
    const back = await waitFor(async () => {
      const x = await snap();
      return x?.node?.ready === true && x.verdict.level !== 'critical' ? x : undefined;
    });
    const resolved = back.alerts.recent.find((a: Alert) => a.kind === 'ready_part_down');
    expect(resolved).toMatchObject({ message: 'channel not ready', active: false, resolved_at: expect.any(String) });
  });
});

describe('routes', () => {
  it('turn false when the gateways stop listening while the API still answers (shutdown)', async () => {
    // A webhook receiver that never answers holds shutdown in its webhook grace, after the gateways closed.
    const hook = await startReceiver(() => 'hang');
    const t = await startTestServer({ PARLEY_WEBHOOK_HTTP_ADDR: hook.url, PARLEY_WEBHOOK_MSG_NOTIFY_BATCH_MAX_ITEMS: '1' });
    try {
      expect((await call(`${t.api}/readyz`)).json).toEqual({ ready: true, parts: READY });
      await post(t.api, '/message/send', { from_uid: 'a', channel_id: 'b', channel_type: 1, payload: 'aGk=' });
      await hook.waitFor('msg.notify');
      const closing = t.server.close();
      const r = await waitFor(async () => {
        const x = await call(`${t.api}/readyz`).catch(() => undefined);
        return x?.status === 503 ? x : undefined;
      });
      expect(r.json).toEqual({ ready: false, reason: 'routes not ready', parts: { routes: false, slots: true, channels: true } });
      await closing;
    } finally {
      await hook.close();
      rmSync(t.dataDir, { recursive: true, force: true });
    }
  });
});

describe('slots', () => {
  it('are false (and so are channels) when the store cannot be read', async () => {
    const dir = tempDir();
    const store = await openEmbeddedStore({ dataDir: dir, sync: 'normal' });
    const probes = { gatewaysListening: () => true, storeReadable: () => store.ping(), storeWritable: () => store.probeWrite(50) };
    try {
      expect(await checkReadiness(probes)).toEqual({ ready: true, parts: READY });
      await store.close();
      expect(await checkReadiness(probes)).toEqual({
        ready: false,
        reason: 'slots not ready, channel not ready',
        parts: { routes: true, slots: false, channels: false },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
