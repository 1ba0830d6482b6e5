import { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePacket, generateKeyPair, PacketType, WkprotoDecoder, type WkPacket } from '@parley/protocol/wkproto';
import { startTestServer, storeToken, type TestServer } from './helpers.ts';

// The TCP gateway reads CONNECT from a byte stream: however the client's bytes are cut into
// reads, a CONNECT is answered, and bytes after it before the CONNACK close the session, never
// leave it waiting.

let t: TestServer;
const logs: string[] = [];
beforeAll(async () => {
  t = await startTestServer({ PARLEY_LOG_LEVEL: 'info' }, (line) => logs.push(line));
  await storeToken(t.api, 'cr-user', 'tok-cr-user');
});
afterAll(() => t.close());

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function connectBytes(uid = 'cr-user', token = `tok-${uid}`): Buffer {
  return encodePacket(
    {
      type: PacketType.CONNECT,
      version: 5,
      deviceFlag: 1,
      deviceId: 'cr-device',
      uid,
      token,
      clientTimestamp: BigInt(Date.now()),
      clientKey: generateKeyPair().publicKey,
    },
    5,
  );
}

/** A raw TCP client: the packets it reads, and whether the server closed it. */
async function rawClient(): Promise<{ socket: Socket; packets: WkPacket[]; closed: Promise<void> }> {
  const port = Number(new URL(t.tcp).port);
  const socket = new Socket();
  socket.setNoDelay(true);
  const packets: WkPacket[] = [];
  const decoder = new WkprotoDecoder();
  socket.on('data', (chunk: Buffer) => decoder.push(chunk, (p) => packets.push(p)));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await new Promise<void>((resolve) => socket.connect(port, '127.0.0.1', resolve));
  return { socket, packets, closed };
}

async function until(check: () => boolean, what: string, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await pause(2);
  }
}

describe('WKProto CONNECT cut into reads', { timeout: 60_000 }, () => {
  it('answers a CONNECT split at every byte boundary with a success CONNACK', async () => {
    const bytes = connectBytes();
    for (let cut = 1; cut < bytes.length; cut++) {
      const c = await rawClient();
      c.socket.write(bytes.subarray(0, cut));
      await pause(3);
      c.socket.write(bytes.subarray(cut));
      await until(() => c.packets.length > 0, `cut at ${cut}`);
      expect(c.packets[0], `cut at ${cut}`).toMatchObject({ type: PacketType.CONNACK, reasonCode: 1 });
      c.socket.destroy();
      await c.closed;
    }
  });

  it('answers a CONNECT sent one byte per write', async () => {
    const bytes = connectBytes();
    const c = await rawClient();
    for (let i = 0; i < bytes.length; i++) {
      c.socket.write(bytes.subarray(i, i + 1));
      if (i % 8 === 0) await pause(1);
    }
    await until(() => c.packets.length > 0, 'byte by byte');
    expect(c.packets[0]).toMatchObject({ type: PacketType.CONNACK, reasonCode: 1 });
    c.socket.destroy();
  });

  it('never leaves a CONNECT with bytes behind it unanswered: a whole packet closes, part of one waits for the rest', async () => {
    const outcome = async (tail: Buffer): Promise<string> => {
      const c = await rawClient();
      c.socket.write(Buffer.concat([connectBytes(), tail]));
      const answered = until(() => c.packets.length > 0, 'CONNACK').then(
        () => `CONNACK ${(c.packets[0] as { reasonCode: number }).reasonCode}`,
      );
      const got = await Promise.race([c.closed.then(() => 'closed'), answered]);
      c.socket.destroy();
      return got;
    };
    // A PING (one byte) before the CONNACK is a protocol violation.
    expect(await outcome(encodePacket({ type: PacketType.PING }, 5))).toBe('closed');
    // The first bytes of a next packet: CONNECT is answered, the packet completes later.
    expect(await outcome(Buffer.from([PacketType.SEND << 4]))).toBe('CONNACK 1');
    expect(await outcome(Buffer.from([PacketType.SEND << 4, 0x80]))).toBe('CONNACK 1');
  });

  it('logs a connection closed before its CONNECT was whole, with the bytes that had come', async () => {
    const bytes = connectBytes();
    const c = await rawClient();
    c.socket.write(bytes.subarray(0, 20));
    await pause(20);
    c.socket.destroy();
    await until(() => logs.some((l) => l.includes('before its CONNECT was answered')), 'log line');
    const line = JSON.parse(logs.find((l) => l.includes('before its CONNECT was answered'))!) as Record<string, unknown>;
    expect(line).toMatchObject({
      msg: 'connection closed by the client before its CONNECT was answered',
      state: 'awaiting-connect',
      bytes: 20,
      decoderHolds: 20,
    });
  });

  it('refuses a wrong token at once, whole or split', async () => {
    const bytes = connectBytes('cr-user', 'wrong');
    for (const cut of [1, 2, Math.floor(bytes.length / 2), bytes.length - 1]) {
      const c = await rawClient();
      c.socket.write(bytes.subarray(0, cut));
      await pause(3);
      c.socket.write(bytes.subarray(cut));
      await c.closed;
      expect(c.packets[0], `cut at ${cut}`).toMatchObject({ type: PacketType.CONNACK, reasonCode: 2 });
    }
  });
});
