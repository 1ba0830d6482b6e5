import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.ts';

/**
 * `api.request_timeout` on the real HTTP API: a request whose headers or body are still
 * arriving when it runs out is answered 408 and its connection closed (Fastify alone leaves
 * the time unbounded: a body trickling a byte every few seconds held its connection for good).
 */

let t: TestServer;
let port: number;
beforeAll(async () => {
  t = await startTestServer({ PARLEY_API_REQUEST_TIMEOUT: '1s' });
  port = Number(new URL(t.api).port);
});
afterAll(() => t.close());

/** Writes `start`, then one byte every 200 ms; resolves with what came back and when the server closed (ms after the start). */
function trickle(start: string): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    let answer = '';
    const so = connect(port, '127.0.0.1', () => so.write(start));
    const drip = setInterval(() => so.write(' '), 200);
    const give = setTimeout(() => so.destroy(), 10_000);
    so.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    so.on('error', () => undefined);
    so.on('close', () => {
      clearInterval(drip);
      clearTimeout(give);
      resolve({ answer, closedAfterMs: performance.now() - started });
    });
  });
}

describe('api.request_timeout', { timeout: 20_000 }, () => {
  it('answers 408 and closes when a body is still trickling in after the timeout', async () => {
    const r = await trickle('POST /user/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{');
    expect(r.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(900);
    expect(r.closedAfterMs).toBeLessThan(4000);
  });

  it('answers 408 and closes when the headers never end', async () => {
    const r = await trickle('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: a');
    expect(r.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(r.closedAfterMs).toBeLessThan(4000);
  });

  it('serves a request that arrives in time', async () => {
    const res = await fetch(`${t.api}/healthz`);
    expect(res.status).toBe(200);
  });
});
