/**
 * Test helpers for WkprotoClient's receive paths: a one-script server that
 * answers CONNECT (with keys, so RECVs can be sealed) and then writes what a
 * test's script says, a RECV to seal, and a collector of `onPayload` texts.
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import {
  encodePacket,
  negotiateVersion,
  PacketType,
  ReasonCode,
  serverKeyExchange,
  WkprotoDecoder,
  type RecvackPacket,
  type RecvPacket,
  type WkPacket,
} from '../src/wkproto/index.ts';

/** Resolves once `n` payloads arrived through `onPayload` (copied to text). */
export function collector(n: number): { got: string[]; done: Promise<void>; onPayload: (buf: Buffer, start: number, end: number) => void } {
  const got: string[] = [];
  let resolve: () => void = () => undefined;
  const done = new Promise<void>((r) => (resolve = r));
  return {
    got,
    done,
    onPayload: (buf, start, end) => {
      got.push(buf.toString('utf8', start, end));
      if (got.length === n) resolve();
    },
  };
}

/** A RECV of message `id` carrying `text` (a plaintext: seal it), with `over` on top. */
export const recv = (id: bigint, text: string, over: Partial<RecvPacket> = {}): RecvPacket => ({
  type: PacketType.RECV,
  setting: 0,
  msgKey: '',
  fromUid: 'pub',
  channelId: 'g',
  channelType: 2,
  clientMsgNo: `no-${id}`,
  messageId: id,
  messageSeq: 100n + (id & 0xffffn),
  timestamp: 1_764_000_000,
  payload: Buffer.from(text),
  ...over,
});

/**
 * A server that answers each connection's CONNECT, then on its first SEND
 * runs `script` with the connection's RECV seal, its version, its socket and
 * that SEND's plaintext; it answers PING and keeps every RECVACK it reads.
 */
export async function scriptedServer(
  script: (seal: (p: RecvPacket) => RecvPacket, version: number, s: Socket, firstPayload: string) => Promise<void> | void,
): Promise<{ url: string; recvacks: RecvackPacket[]; close(): Promise<void> }> {
  const recvacks: RecvackPacket[] = [];
  const sockets = new Set<Socket>();
  const srv = createServer((s) => {
    sockets.add(s);
    s.setNoDelay(true);
    const decoder = new WkprotoDecoder();
    let kx: ReturnType<typeof serverKeyExchange> | undefined;
    let started = false;
    const onPacket = (p: WkPacket): void => {
      if (p.type === PacketType.CONNECT) {
        kx = serverKeyExchange(p.clientKey);
        decoder.version = negotiateVersion(p.version);
        const connack = { type: PacketType.CONNACK, serverVersion: decoder.version, timeDiff: 0n, reasonCode: ReasonCode.Success };
        s.write(encodePacket({ ...connack, serverKey: kx.serverKey, salt: kx.salt, nodeId: 1n }, decoder.version));
      } else if (p.type === PacketType.SEND && kx && !started) {
        started = true;
        const session = kx.session;
        void script((r) => session.sealRecv(r), decoder.version, s, Buffer.from(session.openSend(p)).toString());
      } else if (p.type === PacketType.RECVACK) recvacks.push(p);
      else if (p.type === PacketType.PING) s.write(encodePacket({ type: PacketType.PONG }, decoder.version));
    };
    s.on('data', (d: Buffer) => decoder.push(d, onPacket));
    s.on('error', () => undefined);
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  return {
    url: `tcp://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    recvacks,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => srv.close(r));
    },
  };
}
