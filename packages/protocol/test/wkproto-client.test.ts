import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PacketType, ReasonCode, WkprotoClient, WkprotoConnectError } from '../src/wkproto/index.ts';
import { startMiniServer, type MiniServer } from './wkproto-mini-server.ts';

let server: MiniServer;
beforeAll(async () => {
  server = await startMiniServer(0xffff_fff0n);
});
afterAll(async () => {
  await server?.close();
});

describe('WkprotoClient against a library-built server', () => {
  const cases = [
    { transport: 'tcp', version: 5 },
    { transport: 'ws', version: 5 },
    { transport: 'tcp', version: 6 },
    { transport: 'ws', version: 2 },
  ] as const;

  for (const c of cases) {
    it(`${c.transport} V${c.version}: connect, encrypted send → SENDACK, RECV decrypted + acked, ping`, async () => {
      const url = c.transport === 'tcp' ? server.tcpUrl : server.wsUrl;
      const client = new WkprotoClient({ url, uid: `u-${c.transport}-${c.version}`, token: 'good', version: c.version });
      try {
        const connack = await client.connect();
        expect(connack.reasonCode).toBe(ReasonCode.Success);
        expect(connack.serverVersion).toBe(c.version > 3 ? c.version : undefined);
        expect(client.version).toBe(c.version);

        const before = server.log.sends.length;
        const ack = await client.send({ channelId: 'bob', channelType: 1, payload: '{"type":1,"content":"héllo"}' });
        expect(ack).toMatchObject({ type: PacketType.SENDACK, clientSeq: 1, reasonCode: ReasonCode.Success });
        expect(ack.messageId).toBe((1n << 60n) + 1n);
        const sent = server.log.sends[before];
        expect(sent?.plaintext).toBe('{"type":1,"content":"héllo"}');
        expect(sent?.packet.redDot).toBe(true);
        expect(Buffer.from(sent?.packet.payload ?? []).toString('latin1')).toMatch(/^[A-Za-z0-9+/]+=*$/);

        const msg = await client.nextMessage();
        expect(msg.payload.toString('utf8')).toBe('{"type":1,"content":"héllo"}');
        expect(msg.packet.messageId).toBe(ack.messageId);
        await client.ping();
        const acked = server.log.recvacks.find((r) => r.messageId === ack.messageId);
        expect(acked?.messageSeq).toBe(ack.messageSeq);
      } finally {
        client.close();
      }
    });
  }

  it('V6 carries message_seq above 2^32 exactly; pipelined sends resolve by client_seq', async () => {
    const client = new WkprotoClient({ url: server.tcpUrl, uid: 'pipe', token: 'good', version: 6 });
    await client.connect();
    const acks = await Promise.all(Array.from({ length: 50 }, (_, i) => client.send({ channelId: 'g', channelType: 2, payload: `m${i}` })));
    expect(acks.map((a) => a.clientSeq)).toStrictEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(acks.some((a) => a.messageSeq > 0xffff_ffffn)).toBe(true);
    const got: string[] = [];
    for await (const m of client.messages()) {
      got.push(m.payload.toString());
      if (got.length === 50) break;
    }
    expect(got).toStrictEqual(Array.from({ length: 50 }, (_, i) => `m${i}`));
    client.close();
  });

  it('rejects connect with the CONNACK reason code on a bad token', async () => {
    const client = new WkprotoClient({ url: server.wsUrl, uid: 'x', token: 'bad' });
    const err = await client.connect().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WkprotoConnectError);
    expect((err as WkprotoConnectError).reasonCode).toBe(ReasonCode.AuthFail);
  });

  it('rejects pending work when the connection closes', async () => {
    const client = new WkprotoClient({ url: server.tcpUrl, uid: 'c', token: 'good' });
    await client.connect();
    const next = client.nextMessage(2000);
    client.close();
    await expect(next).rejects.toThrow('client closed');
    expect(() => client.write({ type: PacketType.PING })).toThrow('client closed');
  });
});
