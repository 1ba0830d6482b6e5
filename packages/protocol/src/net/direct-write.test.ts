import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, connect, Socket, type AddressInfo, type Server } from 'node:net';
import { DirectWriter, directWrites, takeReads } from './direct-write.ts';
import { handleBySymbol } from './handle.ts';
import { readPumpImplementation, setReadPumpEnabled } from './read-pump.ts';

/** A connected pair of real loopback sockets: `server` is the accepted side. */
async function pair(): Promise<{ server: Socket; client: Socket; listener: Server }> {
  const listener = createServer();
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const accepted = new Promise<Socket>((r) => listener.once('connection', r));
  const client = connect((listener.address() as AddressInfo).port, '127.0.0.1');
  await new Promise((r) => client.once('connect', r));
  return { server: await accepted, client, listener };
}

/** Frame `i` of a test: 4-byte index then filler, `size` bytes. */
function frame(i: number, size: number): Buffer {
  const b = Buffer.alloc(size, i & 0xff);
  b.writeUInt32BE(i, 0);
  return b;
}

const open: Array<{ server: Socket; client: Socket; listener: Server }> = [];
afterEach(async () => {
  for (const p of open.splice(0)) {
    p.server.destroy();
    p.client.destroy();
    await new Promise((r) => p.listener.close(r));
  }
});

describe('DirectWriter', () => {
  it('uses the handle-level path on this Node, reading the handle through its symbol', () => {
    expect(directWrites).toBe(true);
    expect(handleBySymbol).toBe(true);
  });

  it('writes to the handle a socket has now: before it connects, and after it reconnects', async () => {
    const listener = createServer();
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const port = (listener.address() as AddressInfo).port;
    const got: string[] = [];
    listener.on('connection', (c: Socket) => {
      let text = '';
      c.on('data', (d: Buffer) => (text += d.toString()));
      c.on('end', () => (got.push(text), c.end()));
    });
    const socket = new Socket();
    const writer = new DirectWriter(socket);
    try {
      for (const word of ['first', 'second']) {
        socket.connect(port, '127.0.0.1');
        // Connecting: no handle to write to yet, the Writable holds it.
        expect(writer.write(Buffer.from(`${word}:`))).toBe(false);
        await new Promise((r) => socket.once('connect', r));
        while (socket.writableLength > 0) await new Promise((r) => setTimeout(r, 2));
        // Connected, nothing queued: straight to this connection's handle.
        expect(writer.write(Buffer.from(word))).toBe(true);
        socket.end();
        await new Promise((r) => socket.once('close', r));
      }
      while (got.length < 2) await new Promise((r) => setTimeout(r, 2));
      expect(got).toEqual(['first:first', 'second:second']);
    } finally {
      socket.destroy();
      await new Promise((r) => listener.close(r));
    }
  });

  it('delivers every frame whole and in order, mixed with socket.write, while the peer does not read', async () => {
    const p = await pair();
    open.push(p);
    p.client.pause();
    const sizes = [1, 100, 4096, 65536, 300_000];
    const sent: Buffer[] = [];
    const w = new DirectWriter(p.server);
    const handle = (p.server as unknown as { _handle: { writeQueueSize: number } })._handle;
    let maxQueued = 0;
    for (let i = 0; i < 200; i++) {
      const f = frame(i, Math.max(4, sizes[i % sizes.length]!));
      sent.push(f);
      if (i % 7 === 3) p.server.write(f);
      else w.write(f);
      // Every byte libuv holds is counted (the writer never asks the handle before writing).
      expect(handle.writeQueueSize).toBeLessThanOrEqual(w.queuedBytes());
      maxQueued = Math.max(maxQueued, w.queuedBytes());
    }
    const total = sent.reduce((n, f) => n + f.length, 0);
    // The peer reads nothing yet: the kernel cannot take it all, and what it did not take is counted.
    expect(maxQueued).toBeGreaterThan(1_000_000);
    const got: Buffer[] = [];
    let n = 0;
    const done = new Promise<void>((resolve) =>
      p.client.on('data', (d: Buffer) => {
        got.push(d);
        n += d.length;
        if (n >= total) resolve();
      }),
    );
    p.client.resume();
    await done;
    expect(Buffer.concat(got).equals(Buffer.concat(sent))).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(w.queuedBytes()).toBe(0);
    expect(handle.writeQueueSize).toBe(0);
  });

  it('counts a direct write the kernel has not taken until it is written', async () => {
    const p = await pair();
    open.push(p);
    p.client.pause();
    // Fill the kernel's buffers with direct writes only: each says whether the kernel took it whole.
    const w = new DirectWriter(p.server);
    let i = 0;
    const taken: boolean[] = [];
    while (w.queuedBytes() === 0 && i < 10_000) taken.push(w.write(frame(i++, 65536)));
    expect(w.queuedBytes()).toBeGreaterThan(0);
    expect(p.server.writableLength).toBe(0);
    expect(taken.slice(0, -1).every((t) => t)).toBe(true);
    expect(taken.at(-1)).toBe(false);
    // Nothing more goes direct while libuv holds the rest of that frame: it queues behind it, held.
    const held = w.pending;
    expect(w.write(frame(i, 10))).toBe(false);
    expect(w.pending).toBe(held);
    expect(p.server.writableLength).toBe(10);
    p.client.resume();
    await new Promise<void>((resolve) => {
      const poll = (): void => (w.queuedBytes() === 0 ? resolve() : void setTimeout(poll, 5));
      poll();
    });
    expect(w.queuedBytes()).toBe(0);
  });

  it('destroys the socket, with no exception to the caller, when the peer is gone', async () => {
    const p = await pair();
    open.push(p);
    const closed = new Promise<Error | undefined>((resolve) => {
      let error: Error | undefined;
      p.server.on('error', (e) => (error = e));
      p.server.on('close', () => resolve(error));
    });
    p.client.resetAndDestroy();
    await new Promise((r) => setTimeout(r, 50));
    const w = new DirectWriter(p.server);
    for (let i = 0; i < 20 && !p.server.destroyed; i++) w.write(frame(i, 1000));
    const err = await closed;
    expect(p.server.destroyed).toBe(true);
    expect(err === undefined || ['ECONNRESET', 'EPIPE'].includes((err as { code?: string }).code ?? '')).toBe(true);
  });

  it('falls back to socket.write after end (the Writable reports the error as before)', async () => {
    const p = await pair();
    open.push(p);
    p.server.end();
    const err = new Promise<Error>((r) => p.server.once('error', r));
    new DirectWriter(p.server).write(frame(1, 10));
    expect(((await err) as { code?: string }).code).toBe('ERR_STREAM_WRITE_AFTER_END');
  });
});

const built = readPumpImplementation.reason === 'built';

// Both read paths: the read pump (when built) and Node's per-read callback.
describe.each(built ? ['pump', 'per-read'] : ['per-read'])('takeReads (%s)', (path) => {
  beforeAll(() => setReadPumpEnabled(path === 'pump'));
  afterAll(() => setReadPumpEnabled(true));
  it('hands reads to the taker before the Readable, and to the data listener whenever the socket is paused, in order', async () => {
    const p = await pair();
    open.push(p);
    const log: string[] = [];
    p.server.on('data', (d: Buffer) => log.push(`data:${d.toString()}`));
    expect(takeReads(p.server, (d, start, n) => (log.push(`take:${d.toString('latin1', start, start + n)}`), true))).toBe(true);
    const until = async (n: number) => {
      while (log.length < n) await new Promise((r) => setTimeout(r, 5));
    };
    p.client.write('a');
    await until(1);
    p.server.pause();
    p.client.write('b');
    await new Promise((r) => setTimeout(r, 50));
    p.server.resume();
    await until(2);
    p.client.write('c');
    await until(3);
    expect(log).toEqual(['take:a', 'data:b', 'take:c']);
  });

  it('reads a plain socket into a shared buffer, and gives the data listener copies that later reads leave intact', async () => {
    const p = await pair();
    const q = await pair();
    open.push(p, q);
    const got: Buffer[] = [];
    const reusedFlags: boolean[] = [];
    let taken = 0;
    p.server.on('data', (d: Buffer) => got.push(d));
    q.server.on('data', () => {});
    const take = (buf: Buffer, start: number, n: number, shared: DataView | undefined): boolean => {
      reusedFlags.push(shared !== undefined && shared.buffer === buf.buffer && shared.byteOffset === buf.byteOffset);
      taken += n;
      return buf[start] === 0x2a; // '*' reads are taken, the rest declined
    };
    takeReads(p.server, take);
    takeReads(q.server, take);
    // Reads the taker declines, each followed by reads of the other socket into the same buffer.
    const sent: Buffer[] = [];
    for (let i = 0; i < 20; i++) {
      const chunk = Buffer.alloc(100 + i, 0x61 + i);
      sent.push(chunk);
      const before = got.length;
      p.client.write(chunk);
      while (got.length === before) await new Promise((r) => setTimeout(r, 2));
      const n = taken;
      q.client.write(Buffer.alloc(300, 0x2a));
      while (taken === n) await new Promise((r) => setTimeout(r, 2));
    }
    expect(Buffer.concat(got).equals(Buffer.concat(sent))).toBe(true);
    expect(reusedFlags.every((r) => r)).toBe(true);
  });

  it('lets the data listener have a read the taker declines', async () => {
    const p = await pair();
    open.push(p);
    const log: string[] = [];
    p.server.on('data', (d: Buffer) => log.push(`data:${d.toString()}`));
    takeReads(p.server, (d, start, n) => d.toString('latin1', start, start + n) === 'x' && (log.push('take:x'), true));
    for (const s of ['x', 'y', 'x']) {
      const n = log.length;
      p.client.write(s);
      while (log.length === n) await new Promise((r) => setTimeout(r, 5));
    }
    expect(log).toEqual(['take:x', 'data:y', 'take:x']);
  });
});
