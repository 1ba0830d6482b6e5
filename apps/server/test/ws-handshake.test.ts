import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.ts';

/**
 * What the WebSocket listener answers at the HTTP level, byte for byte as a client sees it:
 * the upgrade (RFC 6455's Sec-WebSocket-Accept, the first offered subprotocol), a plain
 * request (426), another path (404), a bad key or version (400), and an upgrade request that
 * never ends (closed after `gateway.auth_timeout`). Every answer but 101 closes the socket.
 */

let t: TestServer;
let port: number;
beforeAll(async () => {
  t = await startTestServer({ PARLEY_GATEWAY_AUTH_TIMEOUT: '1s' });
  port = Number(new URL(t.ws).port);
});
afterAll(() => t.close());

interface Answer {
  /** The response head: status line and headers, lower-case names. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Whether the server closed the socket (within 2 s of the answer). */
  closed: boolean;
}

/** Writes `request` (latin1) on a fresh connection and reads the answer. */
function ask(request: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const so = connect(port, '127.0.0.1', () => so.write(request, 'latin1'));
    let text = '';
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no complete answer: ${JSON.stringify(text)}`));
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const c = l.indexOf(':');
        headers[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
      }
      so.destroy();
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(end + 4), closed });
    };
    so.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      // An upgrade stays open: answer as soon as the head is complete.
      if (text.startsWith('HTTP/1.1 101') && text.includes('\r\n\r\n')) finish();
    });
    so.on('close', () => {
      closed = true;
      finish();
    });
    so.on('error', () => undefined);
    const timer = setTimeout(finish, 2000);
  });
}

const upgrade = (extra: Record<string, string> = {}, path = '/') => {
  const headers: Record<string, string> = {
    Host: `127.0.0.1:${port}`,
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
    'Sec-WebSocket-Version': '13',
    ...extra,
  };
  const lines = Object.entries(headers)
    .filter(([, v]) => v !== '')
    .map(([k, v]) => `${k}: ${v}`);
  return `GET ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
};

describe('the WebSocket listener over HTTP', { timeout: 15_000 }, () => {
  it("upgrades with RFC 6455's accept key and leaves the connection open", async () => {
    const a = await ask(upgrade());
    expect(a.status).toBe(101);
    expect(a.headers['upgrade']?.toLowerCase()).toBe('websocket');
    expect(a.headers['connection']?.toLowerCase()).toBe('upgrade');
    // RFC 6455 section 1.3's example.
    expect(a.headers['sec-websocket-accept']).toBe('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
    expect(a.headers['sec-websocket-protocol']).toBeUndefined();
    expect(a.headers['sec-websocket-extensions']).toBeUndefined();
    expect(a.closed).toBe(false);
  });

  it('answers any key with its own accept, and selects the first subprotocol offered', async () => {
    const key = Buffer.from('0123456789abcdef').toString('base64');
    const a = await ask(upgrade({ 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Protocol': 'wukong, other' }));
    expect(a.status).toBe(101);
    expect(a.headers['sec-websocket-accept']).toBe(
      createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64'),
    );
    expect(a.headers['sec-websocket-protocol']).toBe('wukong');
  });

  it('offers no compression whatever the client proposes', async () => {
    const a = await ask(upgrade({ 'Sec-WebSocket-Extensions': 'permessage-deflate; client_max_window_bits' }));
    expect(a.status).toBe(101);
    expect(a.headers['sec-websocket-extensions']).toBeUndefined();
  });

  it('answers a plain request with 426', async () => {
    const a = await ask(`GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(a.status).toBe(426);
    expect(a.body).toContain('WebSocket upgrade required');
  });

  it('answers an upgrade to another path with 404 and closes', async () => {
    const a = await ask(upgrade({}, '/chat?token=x'));
    expect(a.status).toBe(404);
    expect(a.closed).toBe(true);
  });

  it('refuses a missing or malformed key and an unknown version with 400, and closes', async () => {
    const refused: Record<string, string>[] = [
      { 'Sec-WebSocket-Key': '' },
      { 'Sec-WebSocket-Key': 'not-base64-of-16-bytes' },
      { 'Sec-WebSocket-Version': '12' },
    ];
    for (const extra of refused) {
      const a = await ask(upgrade(extra));
      expect(a.status, JSON.stringify(extra)).toBe(400);
      expect(a.closed, JSON.stringify(extra)).toBe(true);
    }
  });

  it('closes an upgrade request whose headers never end, after gateway.auth_timeout', async () => {
    const started = performance.now();
    const closed = await new Promise<boolean>((resolve) => {
      const so = connect(port, '127.0.0.1', () => so.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n'));
      so.on('data', () => undefined);
      so.on('error', () => undefined);
      so.on('close', () => resolve(true));
      setTimeout(() => {
        so.destroy();
        resolve(false);
      }, 8000);
    });
    expect(closed).toBe(true);
    // Within the timeout and one connection check (Node's own check runs every 30 s).
    const after = performance.now() - started;
    expect(after).toBeGreaterThanOrEqual(900);
    expect(after).toBeLessThan(4000);
  });
});
