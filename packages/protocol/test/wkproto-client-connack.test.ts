/**
 * WkprotoClient's CONNECT/CONNACK over real sockets, however the server's
 * bytes are cut into reads: a CONNACK split at every byte boundary, and a
 * CONNACK arriving in the same read as the packets that follow it (a RECV,
 * a PONG, a DISCONNECT, part of a RECV). Both receive paths: the reference
 * one (a buffer per read) and the in-place one (`onPayload`, every read in
 * the one shared buffer).
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  encodePacket,
  generateKeyPair,
  negotiateVersion,
  PacketType,
  ReasonCode,
  serverKeyExchange,
  WkprotoClient,
  WkprotoDecoder,
  type ConnectPacket,
  type RecvPacket,
  type WkPacket,
  type WkSessionCrypto,
} from '../src/wkproto/index.ts';

/** What the scripted server does once it has read a whole CONNECT. */
type Script = (
  s: Socket,
  connack: Buffer,
  session: { crypto: WkSessionCrypto; version: number; connect: ConnectPacket },
) => void | Promise<void>;

let server: Server | undefined;
const accepted = new Set<Socket>();
afterEach(async () => {
  for (const s of accepted) s.destroy();
  accepted.clear();
  if (server) await new Promise((r) => server!.close(r));
  server = undefined;
});

/** A TCP server that answers each CONNECT with a success CONNACK written as `script` says. */
async function scripted(script: Script): Promise<{ url: string; recvacks: WkPacket[] }> {
  const recvacks: WkPacket[] = [];
  server = createServer((s) => {
    accepted.add(s);
    s.setNoDelay(true);
    s.on('error', () => undefined);
    const decoder = new WkprotoDecoder();
    s.on('data', (chunk: Buffer) => {
      decoder.push(chunk, (p) => {
        if (p.type === PacketType.RECVACK) recvacks.push(p);
        if (p.type !== PacketType.CONNECT) return;
        const version = negotiateVersion(p.version);
        const kx = serverKeyExchange(p.clientKey);
        decoder.version = version;
        const connack = encodePacket(
          {
            type: PacketType.CONNACK,
            serverVersion: version,
            timeDiff: 0n,
            reasonCode: ReasonCode.Success,
            serverKey: kx.serverKey,
            salt: kx.salt,
            nodeId: 7n,
          },
          version,
        );
        void script(s, connack, { crypto: kx.session, version, connect: p });
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`, recvacks };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One RECV for the connected session, encrypted and signed with its keys. */
function recvFor(session: { crypto: WkSessionCrypto; version: number; connect: ConnectPacket }, text: string, id: bigint): Buffer {
  const recv: RecvPacket = {
    type: PacketType.RECV,
    setting: 0,
    msgKey: '',
    fromUid: 'someone',
    channelId: 'someone',
    channelType: 1,
    clientMsgNo: `m${id}`,
    messageId: id,
    messageSeq: id,
    timestamp: 1_700_000_000,
    payload: Buffer.from(text),
  };
  return encodePacket(session.crypto.sealRecv(recv), session.version);
}

function client(url: string, uid: string, onPayload?: (buf: Buffer, start: number, end: number) => void): WkprotoClient {
  return new WkprotoClient({ url, uid, token: 't', deviceFlag: 1, encrypt: true, timeoutMs: 3000, ...(onPayload ? { onPayload } : {}) });
}

for (const path of ['reference', 'in-place'] as const) {
  describe(`WkprotoClient CONNACK cut into reads (${path} receive path)`, { timeout: 60_000 }, () => {
    it('connects whichever byte the CONNACK is split at', async () => {
      let cut = 0;
      const { url } = await scripted(async (s, connack) => {
        s.write(connack.subarray(0, cut));
        await pause(4);
        s.write(connack.subarray(cut));
      });
      const probe = encodePacket(
        {
          type: PacketType.CONNACK,
          serverVersion: 5,
          timeDiff: 0n,
          reasonCode: 1,
          serverKey: 'x'.repeat(44),
          salt: 'y'.repeat(16),
          nodeId: 7n,
        },
        5,
      );
      for (cut = 1; cut < probe.length; cut++) {
        const c = client(url, `split-${cut}`, path === 'in-place' ? () => undefined : undefined);
        const ack = await c.connect();
        expect(ack.reasonCode, `cut at ${cut}`).toBe(ReasonCode.Success);
        c.close();
      }
    });

    it('reads the RECV, PONG and DISCONNECT that arrive in the same read as the CONNACK', async () => {
      const { url, recvacks } = await scripted((s, connack, session) => {
        s.write(
          Buffer.concat([
            connack,
            recvFor(session, 'first', 101n),
            encodePacket({ type: PacketType.PONG }, session.version),
            encodePacket({ type: PacketType.DISCONNECT, reasonCode: 0, reason: 'bye' }, session.version),
          ]),
        );
      });
      const got: string[] = [];
      const c = client(url, 'coalesced', path === 'in-place' ? (buf, start, end) => got.push(buf.toString('utf8', start, end)) : undefined);
      c.on('recv', (m: { payload: Buffer }) => got.push(m.payload.toString('utf8')));
      const errors: unknown[] = [];
      c.on('recv-error', (e) => errors.push(e));
      const disconnected = new Promise((r) => c.on('disconnect', r));
      await c.connect();
      await disconnected;
      expect(errors).toEqual([]);
      expect(got).toEqual(['first']);
      // The RECV was acknowledged, at the session's version.
      for (let i = 0; i < 100 && recvacks.length === 0; i++) await pause(10);
      expect(recvacks).toMatchObject([{ type: PacketType.RECVACK, messageId: 101n }]);
      c.close();
    });

    it('reads a RECV that begins in the CONNACK’s read and ends in the next one', async () => {
      const { url } = await scripted(async (s, connack, session) => {
        const recv = recvFor(session, 'straddles', 202n);
        s.write(Buffer.concat([connack, recv.subarray(0, 3)]));
        await pause(4);
        s.write(recv.subarray(3));
      });
      const got: string[] = [];
      const c = client(url, 'straddle', path === 'in-place' ? (buf, start, end) => got.push(buf.toString('utf8', start, end)) : undefined);
      c.on('recv', (m: { payload: Buffer }) => got.push(m.payload.toString('utf8')));
      await c.connect();
      for (let i = 0; i < 100 && got.length === 0; i++) await pause(10);
      expect(got).toEqual(['straddles']);
      c.close();
    });

    it('says, when the CONNACK times out, what the connection wrote, read and holds', async () => {
      const { url } = await scripted(() => undefined);
      const c = new WkprotoClient({
        url,
        uid: 'silent',
        token: 't',
        timeoutMs: 300,
        ...(path === 'in-place' ? { onPayload: () => undefined } : {}),
      });
      await expect(c.connect()).rejects.toThrow(
        /^CONNACK timed out after 300 ms \(tcp local port \d+, \d+ bytes written, 0 read(, destroyed)?; decoder holds 0 bytes; CONNACK awaited\)$/,
      );
      const { url: halfUrl } = await scripted((s, connack) => void s.write(connack.subarray(0, 10)));
      const h = new WkprotoClient({
        url: halfUrl,
        uid: 'half',
        token: 't',
        timeoutMs: 300,
        ...(path === 'in-place' ? { onPayload: () => undefined } : {}),
      });
      await expect(h.connect()).rejects.toThrow(/, \d+ bytes written, 10 read(, destroyed)?; decoder holds 10 bytes; CONNACK awaited\)$/);
    });

    it('rejects at once, not at the CONNACK timeout, when the server closes without a CONNACK', async () => {
      const { url } = await scripted((s) => void s.end());
      const c = client(url, 'no-connack', path === 'in-place' ? () => undefined : undefined);
      const started = Date.now();
      await expect(c.connect()).rejects.toThrow(/closed/);
      expect(Date.now() - started).toBeLessThan(1000);
    });
  });
}

describe('WkprotoClient with a key pair made in advance (keyPair)', { timeout: 30_000 }, () => {
  it('offers that pair’s public key and derives the session from it', async () => {
    const offered: string[] = [];
    const { url } = await scripted((s, connack, session) => {
      offered.push(session.connect.clientKey);
      s.write(Buffer.concat([connack, recvFor(session, 'sealed for this pair', 303n)]));
    });
    const keyPair = generateKeyPair();
    const got: string[] = [];
    const c = new WkprotoClient({ url, uid: 'made-ahead', token: 't', encrypt: true, timeoutMs: 3000, keyPair });
    c.on('recv', (m: { payload: Buffer }) => got.push(m.payload.toString('utf8')));
    const errors: unknown[] = [];
    c.on('recv-error', (e) => errors.push(e));
    await c.connect();
    for (let i = 0; i < 100 && got.length === 0; i++) await pause(10);
    expect(offered).toEqual([keyPair.publicKey]);
    expect(errors).toEqual([]);
    expect(got).toEqual(['sealed for this pair']);
    c.close();
  });

  it('refuses a pair that already served a connect, before opening a socket', async () => {
    const { url } = await scripted((s, connack) => void s.write(connack));
    const keyPair = generateKeyPair();
    const first = new WkprotoClient({ url, uid: 'first', token: 't', timeoutMs: 3000, keyPair });
    await first.connect();
    const before = accepted.size;
    const second = new WkprotoClient({ url, uid: 'second', token: 't', timeoutMs: 3000, keyPair });
    await expect(second.connect()).rejects.toThrow(/already served a connect/);
    // The same client connecting again with its pair is refused too.
    first.close();
    await expect(first.connect()).rejects.toThrow(/already served a connect/);
    await pause(50);
    expect(accepted.size).toBe(before);
  });

  it('refuses a pair given with encrypt: false', () => {
    expect(() => new WkprotoClient({ url: 'tcp://127.0.0.1:1', uid: 'u', token: 't', encrypt: false, keyPair: generateKeyPair() })).toThrow(
      /encrypt: false/,
    );
  });
});
