import { describe, expect, it } from 'vitest';
import { connectRpc, spawnServer, startTestServer, storeToken, tempDir, testEnv } from './helpers.ts';
import { call } from './ops-helpers.ts';

describe('/metrics', () => {
  it('serves Prometheus text with Parley counters and process defaults', async () => {
    const t = await startTestServer();
    try {
      await storeToken(t.api, 'met-a', 'tok');
      const a = await connectRpc(t.ws, 'met-a', 'tok');
      for (let i = 0; i < 5; i++) await a.request('send', { channelId: 'met-b', channelType: 1, payload: { i } });
      const r = await call(`${t.api}/metrics`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(r.text).toContain('# TYPE parley_sends_total counter');
      expect(r.text).toMatch(/^parley_sends_total\{node_id="1"\} 5$/m);
      expect(r.text).toMatch(/^parley_appends_total\{node_id="1"\} 5$/m);
      expect(r.text).toMatch(/^parley_connections\{protocol="jsonrpc",node_id="1"\} 1$/m);
      expect(r.text).toContain('parley_nodejs_eventloop_lag_seconds');
      a.close();
      const again = await call(`${t.api}/metrics`, { method: 'POST', body: {} });
      expect(again.text).toMatch(/^parley_sends_total\{node_id="1"\} 5$/m);
    } finally {
      await t.close();
    }
  });

  it("histograms the embedded writer's commits, and its pauses beside them by reason", async () => {
    const t = await startTestServer();
    try {
      await storeToken(t.api, 'pause-a', 'tok');
      const a = await connectRpc(t.ws, 'pause-a', 'tok');
      // Person-channel sends leave latest-send marks, which the writer applies a second later in a transaction of its own.
      for (let i = 0; i < 3; i++) await a.request('send', { channelId: 'pause-b', channelType: 1, payload: { i } });
      // One series of the histogram for `reason` (prom-client orders the labels as it pleases).
      const series = (text: string, suffix: string, reason: string) =>
        new RegExp(`^parley_store_writer_pause_seconds_${suffix}\\{([^}]*,)?reason="${reason}"(,[^}]*)?\\} (\\S+)$`, 'm').exec(text)?.[3];
      const count = (text: string, reason: string) => Number(series(text, 'count', reason));
      const first = await call(`${t.api}/metrics`);
      // Each send was acknowledged before the next was made: three batches, each committed once.
      expect(first.text).toContain('# TYPE parley_store_commit_seconds histogram');
      expect(Number(/^parley_store_commit_seconds_count\{node_id="1"\} (\S+)$/m.exec(first.text)?.[1])).toBeGreaterThanOrEqual(3);
      expect(Number(/^parley_store_commit_seconds_sum\{node_id="1"\} (\S+)$/m.exec(first.text)?.[1])).toBeGreaterThan(0);
      expect(first.text).toMatch(/^parley_store_commit_seconds_bucket\{le="0\.02",node_id="1"\} \d+$/m);
      expect(first.text).toContain('# TYPE parley_store_writer_pause_seconds histogram');
      // Both reasons are listed before they first happen; no WAL restart comes of three sends.
      expect(count(first.text, 'wal_restart')).toBe(0);
      expect(count(first.text, 'marks')).toBeGreaterThanOrEqual(0);
      await expect.poll(async () => count((await call(`${t.api}/metrics`)).text, 'marks'), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
      const text = (await call(`${t.api}/metrics`)).text;
      expect(Number(series(text, 'sum', 'marks'))).toBeGreaterThan(0);
      expect(text).toMatch(/^parley_store_writer_pause_seconds_bucket\{le="\+Inf",([^}]*,)?reason="marks"(,[^}]*)?\} [1-9]\d*$/m);
      expect(text).toMatch(/^parley_store_writer_pause_seconds_count\{([^}]*,)?node_id="1"(,[^}]*)?\} /m);
      a.close();
    } finally {
      await t.close();
    }
  });

  it('answers 404 when observability.metrics_enable is false', async () => {
    const t = await startTestServer({ PARLEY_OBSERVABILITY_METRICS_ENABLE: 'false' });
    try {
      const r = await call(`${t.api}/metrics`);
      expect(r.status).toBe(404);
      expect(r.text).toBe('404 page not found');
    } finally {
      await t.close();
    }
  });
});

describe('logs of the operations routes', () => {
  it('never contain the bench token, Authorization headers or bench user tokens', async () => {
    const secret = 'bench-SECRET-5e1d0c';
    const userToken = 'bench-user-TOKEN-77aa';
    const srv = await spawnServer(
      testEnv(tempDir(), {
        PARLEY_LOG_LEVEL: 'trace',
        PARLEY_BENCH_API_ENABLE: 'true',
        PARLEY_OBSERVABILITY_DEBUG_API_ENABLE: 'true',
        PARLEY_BENCH_API_TOKEN: secret,
      }),
    );
    try {
      const auth = { authorization: `Bearer ${secret}` };
      expect(
        (
          await call(`${srv.api}/bench/v1/users/tokens`, {
            headers: auth,
            body: { run_id: 'r', batch_id: 'b', users: [{ uid: 'lu', token: userToken }] },
          })
        ).status,
      ).toBe(200);
      await call(`${srv.api}/bench/v1/users/tokens`, { headers: { authorization: `Bearer ${secret}-wrong` }, body: { run_id: 'r' } });
      await call(`${srv.api}/bench/v1/users/tokens`, { headers: auth, body: `{"token":"${userToken}"` });
      const cfg = await call(`${srv.api}/debug/config`, { headers: auth });
      expect(cfg.text).not.toContain(secret);
    } finally {
      srv.proc.kill('SIGTERM');
      await srv.exited;
    }
    const log = srv.stderr();
    expect(log).not.toContain(secret);
    expect(log).not.toContain(userToken);
  }, 30_000);
});
