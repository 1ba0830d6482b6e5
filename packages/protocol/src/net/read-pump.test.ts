import { spawn } from 'node:child_process';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { takeReads } from './direct-write.ts';
import { joinReadGroup, leaveReadGroup, readPumpImplementation, readPumpStats, type ReadGroup } from './read-pump.ts';

const built = readPumpImplementation.reason === 'built';

async function listener(): Promise<Server> {
  const l = createServer();
  await new Promise<void>((r) => l.listen(0, '127.0.0.1', r));
  return l;
}

/** A connected pair of real loopback sockets on `l`: `server` is the accepted side. */
async function pair(l: Server): Promise<{ server: Socket; client: Socket }> {
  const accepted = new Promise<Socket>((r) => l.once('connection', r));
  const client = connect((l.address() as AddressInfo).port, '127.0.0.1');
  await new Promise((r) => client.once('connect', r));
  return { server: await accepted, client };
}

const until = async (ok: () => boolean, ms = 5000): Promise<void> => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 2));
  }
};

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe('the read pump (@parley/readpump)', () => {
  it('is built where CI runs', () => {
    if (process.env.CI === 'true') expect(readPumpImplementation, readPumpImplementation.reason).toMatchObject({ reason: 'built' });
  });

  it.runIf(built)('takes the reads of many sockets, several in one call, each socket in order', async () => {
    const l = await listener();
    cleanup.push(() => new Promise((r) => l.close(r)));
    const pairs: Array<{ server: Socket; client: Socket }> = [];
    for (let i = 0; i < 100; i++) {
      const p = await pair(l);
      pairs.push(p);
      cleanup.push(() => (p.server.destroy(), p.client.destroy()));
    }
    const got = pairs.map(() => [] as string[]);
    pairs.forEach((p, i) => {
      p.server.on('data', () => {});
      expect(takeReads(p.server, (buf, start, n) => (got[i]!.push(buf.toString('latin1', start, start + n)), true))).toBe(true);
    });
    const before = { ...readPumpStats };
    for (let round = 0; round < 5; round++) {
      // Every client writes before the server's loop turns: the reads wait together.
      pairs.forEach((p, i) => p.client.write(`${i}.${round};`));
      await until(() => got.every((g) => g.join('').split(';').length > round + 1));
    }
    pairs.forEach((_, i) => expect(got[i]!.join('')).toBe([0, 1, 2, 3, 4].map((r) => `${i}.${r};`).join('')));
    const reads = readPumpStats.reads - before.reads;
    const batches = readPumpStats.batches - before.batches;
    expect(reads).toBeGreaterThanOrEqual(500);
    expect(batches).toBeLessThan(reads);
  });

  it.runIf(built)(
    'hands a group’s reads over in one call a turn, under each socket’s key; a socket that leaves goes back to its taker',
    async () => {
      const l = await listener();
      cleanup.push(() => new Promise((r) => l.close(r)));
      const pairs: Array<{ server: Socket; client: Socket }> = [];
      for (let i = 0; i < 40; i++) {
        const p = await pair(l);
        pairs.push(p);
        cleanup.push(() => (p.server.destroy(), p.client.destroy()));
      }
      const own = pairs.map(() => [] as string[]);
      const grouped = pairs.map(() => [] as string[]);
      const calls: number[] = [];
      const group: ReadGroup = {
        takeReads(buf, reads, k) {
          calls.push(k);
          for (let i = 0; i < 3 * k; i += 3)
            grouped[reads[i]! - 100]!.push(buf.toString('latin1', reads[i + 1]!, reads[i + 1]! + reads[i + 2]!));
        },
      };
      pairs.forEach((p, i) => {
        p.server.on('data', () => {});
        takeReads(p.server, (buf, start, n) => (own[i]!.push(buf.toString('latin1', start, start + n)), true));
        expect(joinReadGroup(p.server, group, 100 + i)).toBe(true);
      });
      const bytesBefore = pairs[0]!.server.bytesRead;
      for (let round = 0; round < 3; round++) {
        pairs.forEach((p, i) => p.client.write(`${i}.${round};`));
        await until(() => grouped.every((g) => g.join('').split(';').length > round + 1));
      }
      pairs.forEach((_, i) => expect(grouped[i]!.join('')).toBe([0, 1, 2].map((r) => `${i}.${r};`).join('')));
      expect(own.every((o) => o.length === 0)).toBe(true);
      // Several sockets' reads in one call; the pump's byte count still counts them.
      expect(Math.max(...calls)).toBeGreaterThan(1);
      expect(pairs[0]!.server.bytesRead - bytesBefore).toBe('0.0;0.1;0.2;'.length);
      leaveReadGroup(pairs[0]!.server);
      pairs[0]!.client.write('back;');
      pairs[1]!.client.write('still;');
      await until(() => own[0]!.join('') === 'back;' && grouped[1]!.join('').endsWith('still;'));
      // A socket that is not pumped cannot join.
      const unpumped = await pair(l);
      cleanup.push(() => (unpumped.server.destroy(), unpumped.client.destroy()));
      expect(joinReadGroup(unpumped.server, group, 1)).toBe(false);
    },
  );

  it.runIf(built)('pumps a client socket taken before it connects, from its connect on', async () => {
    const l = await listener();
    cleanup.push(() => new Promise((r) => l.close(r)));
    const accepted = new Promise<Socket>((r) => l.once('connection', r));
    const client = connect((l.address() as AddressInfo).port, '127.0.0.1');
    cleanup.push(() => client.destroy());
    const got: string[] = [];
    client.on('data', () => {});
    const sockets = readPumpStats.sockets;
    expect(takeReads(client, (buf, start, n) => (got.push(buf.toString('latin1', start, start + n)), true))).toBe(true);
    expect(readPumpStats.sockets).toBe(sockets);
    const server = await accepted;
    cleanup.push(() => server.destroy());
    await until(() => !client.connecting);
    expect(readPumpStats.sockets).toBe(sockets + 1);
    server.write('from the server');
    await until(() => got.length === 1);
    expect(got).toEqual(['from the server']);
  });

  it.runIf(built)('gives a socket back to Node at the end of the stream: every byte, then end and close', async () => {
    const l = await listener();
    cleanup.push(() => new Promise((r) => l.close(r)));
    const p = await pair(l);
    cleanup.push(() => p.client.destroy());
    const log: string[] = [];
    p.server.on('data', (d: Buffer) => log.push(`data:${d.toString()}`));
    p.server.on('end', () => (log.push('end'), p.server.end()));
    p.server.on('close', () => log.push('close'));
    const sockets = readPumpStats.sockets;
    takeReads(p.server, (buf, start, n) => (log.push(`take:${buf.toString('latin1', start, start + n)}`), true));
    expect(readPumpStats.sockets).toBe(sockets + 1);
    p.client.write('a');
    await until(() => log.length === 1);
    p.client.end('b');
    await until(() => log.includes('close'));
    expect(log).toEqual(['take:a', 'take:b', 'end', 'close']);
    expect(readPumpStats.sockets).toBe(sockets);
    // The pump's reads are counted where Node counts its own.
    expect(p.server.bytesRead).toBe(2);
  });

  it.runIf(built)('closes the connection when Node closes the socket, and a socket later given the same descriptor reads', async () => {
    const l = await listener();
    cleanup.push(() => new Promise((r) => l.close(r)));
    const sockets = readPumpStats.sockets;
    for (let i = 0; i < 3; i++) {
      const p = await pair(l);
      cleanup.push(() => p.client.destroy());
      const got: string[] = [];
      p.server.on('data', () => {});
      takeReads(p.server, (buf, start, n) => (got.push(buf.toString('latin1', start, start + n)), true));
      p.client.write(`hello ${i}`);
      await until(() => got.length === 1);
      expect(got).toEqual([`hello ${i}`]);
      // The peer sees the end as soon as the server side is destroyed: nothing else holds the descriptor open.
      const ended = new Promise((r) => p.client.once('end', r));
      p.client.on('error', () => {});
      p.client.resume();
      p.server.destroy();
      await ended;
      // Out of the pump before Node closed the descriptor.
      expect(readPumpStats.sockets).toBe(sockets);
    }
  });

  it.runIf(built)("follows Node's flow control: a paused socket stops being read, and resumes whole and in order", async () => {
    const l = await listener();
    cleanup.push(() => new Promise((r) => l.close(r)));
    const p = await pair(l);
    cleanup.push(() => (p.server.destroy(), p.client.destroy()));
    const chunks: Buffer[] = [];
    p.server.on('data', (d: Buffer) => chunks.push(Buffer.from(d)));
    takeReads(p.server, () => false);
    p.server.pause();
    const sent = Buffer.alloc(8 << 20);
    for (let i = 0; i < sent.length; i += 4) sent.writeUInt32BE(i, i);
    p.client.write(sent);
    await new Promise((r) => setTimeout(r, 300));
    // Stopped near the Readable's high-water mark (16 KiB) plus one read, far from all 8 MiB.
    expect(p.server.readableLength).toBeLessThan(256 << 10);
    expect(p.client.writableLength).toBeGreaterThan(0);
    p.server.resume();
    await until(() => chunks.reduce((n, c) => n + c.length, 0) === sent.length, 20_000);
    expect(Buffer.concat(chunks).equals(sent)).toBe(true);
  });

  it.runIf(built)('destroys the socket with the error of a failed read (a reset connection)', async () => {
    const l = await listener();
    cleanup.push(() => new Promise((r) => l.close(r)));
    const p = await pair(l);
    p.server.on('data', () => {});
    takeReads(p.server, () => true);
    const failed = new Promise<NodeJS.ErrnoException>((r) => p.server.once('error', r));
    // Unread data at close makes the kernel reset the connection.
    p.server.write('unread');
    await new Promise((r) => setTimeout(r, 20));
    p.client.resetAndDestroy();
    const err = await failed;
    expect(err.code).toBe('ECONNRESET');
    expect(err.syscall).toBe('read');
    await until(() => p.server.destroyed);
  });

  it.runIf(built)('refuses arguments that are not descriptors and ids, in the native module', async () => {
    const { createRequire } = await import('node:module');
    const m = (createRequire(import.meta.url)('@parley/readpump') as { native: import('@parley/readpump').ReadPumpNative }).native;
    const bad = [
      () => m.add(-1, 1),
      () => m.add(3, 'x' as unknown as number),
      () => (m.add as (fd: number) => number)(3),
      () => m.remove(-2),
    ];
    for (const call of bad) expect(call).toThrow(TypeError);
    // A descriptor that is not in the set, and one that is not a socket: -errno, not an exception.
    expect(m.remove(100_000)).toBeLessThan(0);
    expect(() => m.open(new Uint8Array(16), () => {})).toThrow();
  });

  it('refuses a PARLEY_READPUMP it does not know, and keeps the per-read path with off', async () => {
    const run = (value: string) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [
            '--import',
            'tsx',
            '-e',
            `import(${JSON.stringify(new URL('./read-pump.ts', import.meta.url).href)}).then((m) => console.log(m.readPumpImplementation.name))`,
          ],
          { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PARLEY_READPUMP: value } },
        );
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('exit', (code) => resolve({ code, out: out.trim(), err }));
      });
    const bad = await run('yes');
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain("PARLEY_READPUMP must be 'on' or 'off', not 'yes'");
    expect(await run('off')).toMatchObject({ code: 0, out: 'per-read' });
    if (built) expect(await run('on')).toMatchObject({ code: 0, out: 'pump' });
  }, 60_000);
});
