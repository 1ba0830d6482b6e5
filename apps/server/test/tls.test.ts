import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startTestServer, tempDir, type TestServer } from './helpers.ts';

let t: TestServer;
let ca: Buffer;
let apiPort: number;
let wsPort: number;

beforeAll(async () => {
  const dir = tempDir('parley-tls-');
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  // A self-signed certificate for 127.0.0.1, made for this test only.
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  ca = readFileSync(cert);
  t = await startTestServer({
    PARLEY_API_TLS_CERT: cert,
    PARLEY_API_TLS_KEY: key,
    PARLEY_GATEWAY_TLS_CERT: cert,
    PARLEY_GATEWAY_TLS_KEY: key,
    PARLEY_GATEWAY_AUTH_TIMEOUT: '1s',
  });
  apiPort = t.server.addresses.api.port;
  wsPort = t.server.addresses.ws.port;
});
afterAll(() => t.close());

function httpsGet(path: string): Promise<{ status: number; body: string; protocol: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: apiPort, path, ca, method: 'GET' }, (res) => {
      let body = '';
      const protocol = (res.socket as unknown as { getProtocol(): string }).getProtocol();
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, protocol }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('TLS', { timeout: 15_000 }, () => {
  it('serves the API over HTTPS only, verified against the certificate', async () => {
    const r = await httpsGet('/route');
    expect(r.status).toBe(200);
    expect(r.protocol).toMatch(/^TLSv1\.[23]$/);
    // With gateway TLS, /route gives clients the wss:// address.
    expect(JSON.parse(r.body)).toMatchObject({ ws_addr: '', wss_addr: `wss://127.0.0.1:${wsPort}` });
    await expect(fetch(`http://127.0.0.1:${apiPort}/healthz`)).rejects.toThrow();
  });

  it('accepts wss:// on the WebSocket gateway and refuses plain ws://', async () => {
    const secure = new WebSocket(`wss://127.0.0.1:${wsPort}/`, { ca });
    await new Promise<void>((resolve, reject) => {
      secure.once('open', () => resolve());
      secure.once('error', reject);
    });
    const answer = new Promise<string>((resolve) => secure.once('message', (d) => resolve(d.toString())));
    secure.send('{"method":"ping","id":"p1"}');
    expect(JSON.parse(await answer)).toMatchObject({ id: 'p1', error: { code: -32600 } });
    secure.close();
    const plain = new WebSocket(`ws://127.0.0.1:${wsPort}/`);
    await expect(
      new Promise((resolve, reject) => {
        plain.once('open', resolve);
        plain.once('error', reject);
      }),
    ).rejects.toThrow();
  });

  it('closes a gateway connection that never starts its TLS handshake after gateway.auth_timeout (1 s here)', async () => {
    const started = performance.now();
    const closedAfter = await new Promise<number>((resolve) => {
      const so = connect(wsPort, '127.0.0.1');
      so.on('error', () => undefined);
      so.on('close', () => resolve(performance.now() - started));
      setTimeout(() => {
        so.destroy();
        resolve(Infinity);
      }, 10_000);
    });
    // Node's own default is 120 s.
    expect(closedAfter).toBeGreaterThanOrEqual(900);
    expect(closedAfter).toBeLessThan(4000);
  });
});
