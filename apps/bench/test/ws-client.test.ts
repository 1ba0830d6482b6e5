/**
 * The generator's own WebSocket client against the `ws` package's server (a
 * client it did not write) and against raw TCP servers that answer the
 * upgrade wrongly: the handshake is checked, long messages cross both ways
 * intact (16- and 64-bit lengths, masked by the client), pings are answered,
 * a server's close ends the connection cleanly, and a refused or forged
 * upgrade is an error.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { WsClient } from '../src/drivers/ws-client.ts';

let wss: WebSocketServer | undefined;
let raw: Server | undefined;
afterEach(() => {
  for (const c of wss?.clients ?? []) c.terminate();
  wss?.close();
  raw?.close();
  wss = raw = undefined;
});

async function wsServer(): Promise<{ url: string; conn: Promise<WebSocket> }> {
  wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss!.once('listening', r));
  const conn = new Promise<WebSocket>((resolve) => wss!.once('connection', resolve));
  return { url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}/path?x=1`, conn };
}

/** A TCP server that answers every request with `answer`. */
async function rawServer(answer: (request: string) => string): Promise<string> {
  raw = createServer((s) => {
    let text = '';
    s.on('data', (d) => {
      text += d.toString('latin1');
      if (text.includes('\r\n\r\n')) s.end(answer(text));
    });
  });
  await new Promise<void>((r) => raw!.listen(0, '127.0.0.1', r));
  return `ws://127.0.0.1:${(raw.address() as { port: number }).port}/`;
}

/** Opens a client and collects what it reports. */
function client(url: string) {
  const texts: string[] = [];
  let opened!: () => void;
  let closed!: (err: Error | undefined) => void;
  const open = new Promise<void>((r) => (opened = r));
  const end = new Promise<Error | undefined>((r) => (closed = r));
  const c = new WsClient(url, {
    open: () => opened(),
    text: (buf, s, e) => texts.push(buf.toString('utf8', s, e)),
    closed: (err) => closed(err),
  });
  return { c, texts, open, end };
}

describe("the bench's WebSocket client", () => {
  it('upgrades with ws, carries long messages both ways, answers pings and ends cleanly on the server close', async () => {
    const { url, conn } = await wsServer();
    const { c, texts, open, end } = client(url);
    await open;
    const server = await conn;
    const got: string[] = [];
    server.on('message', (d, isBinary) => got.push(`${isBinary ? 'binary' : 'text'}:${d.toString().length}:${d.toString().slice(0, 12)}`));
    const pong = new Promise<Buffer>((r) => server.once('pong', r));
    const long = 'é'.repeat(40_000); // 80,000 bytes of UTF-8: a 64-bit length
    c.sendText('hello');
    c.sendText('x'.repeat(300)); // a 16-bit length
    c.sendText(long);
    server.send('small');
    server.send('y'.repeat(70_000));
    server.ping(Buffer.from('are you there'));
    expect((await pong).toString()).toBe('are you there');
    await expect.poll(() => got.length).toBe(3);
    expect(got).toEqual(['text:5:hello', 'text:300:xxxxxxxxxxxx', `text:40000:${'é'.repeat(12)}`]);
    await expect.poll(() => texts.length).toBe(2);
    expect(texts).toEqual(['small', 'y'.repeat(70_000)]);
    const serverClosed = new Promise<number>((r) => server.once('close', (code) => r(code)));
    server.close(1000, 'bye');
    expect(await end).toBeUndefined();
    expect(await serverClosed).toBe(1000);
  });

  it('closes with code 1000 when asked', async () => {
    const { url, conn } = await wsServer();
    const { c, open, end } = client(url);
    await open;
    const server = await conn;
    const code = new Promise<number>((r) => server.once('close', (n) => r(n)));
    c.close();
    expect(await code).toBe(1000);
    expect(await end).toBeUndefined();
  });

  it('fails on a refused upgrade and on a forged Sec-WebSocket-Accept', async () => {
    const refused = client(await rawServer(() => 'HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n'));
    expect((await refused.end)?.message).toMatch(/upgrade was refused: HTTP\/1\.1 403 Forbidden/);
    raw!.close();
    const forged = client(
      await rawServer(
        () => 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAA\r\n\r\n',
      ),
    );
    expect((await forged.end)?.message).toMatch(/wrong Sec-WebSocket-Accept/);
  });

  it('writes a well-formed upgrade request for the URL it was given', async () => {
    let request = '';
    const url = await rawServer((r) => {
      request = r;
      return 'HTTP/1.1 400 Bad Request\r\n\r\n';
    });
    const { end } = client(`${url}ws?a=b`);
    await end;
    const lines = request.split('\r\n');
    expect(lines[0]).toBe('GET /ws?a=b HTTP/1.1');
    expect(lines).toContain(`Host: ${new URL(url).host}`);
    expect(lines).toContain('Upgrade: websocket');
    expect(lines).toContain('Connection: Upgrade');
    expect(lines).toContain('Sec-WebSocket-Version: 13');
    expect(lines.find((l) => l.startsWith('Sec-WebSocket-Key: '))?.slice(19)).toMatch(/^[A-Za-z0-9+/]{22}==$/);
  });
});
