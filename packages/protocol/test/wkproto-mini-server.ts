/**
 * A minimal WKProto server built only from the library (decoder, encoders,
 * crypto) for client tests: it authenticates token "good", answers SEND with
 * SENDACK and echoes the message back as an encrypted RECV, answers PING.
 * Listens on 127.0.0.1 ephemeral ports, over TCP and WebSocket.
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  encodePacket,
  negotiateVersion,
  PacketType,
  ReasonCode,
  serverKeyExchange,
  WkprotoDecoder,
  type RecvackPacket,
  type SendPacket,
  type WkPacket,
  type WkSessionCrypto,
} from '../src/wkproto/index.ts';

/** What the server observed, for assertions. */
export interface MiniServerLog {
  sends: { packet: SendPacket; plaintext: string }[];
  recvacks: RecvackPacket[];
  errors: Error[];
}

/** A running mini server; `close()` stops both listeners. */
export interface MiniServer {
  tcpUrl: string;
  wsUrl: string;
  log: MiniServerLog;
  close(): Promise<void>;
}

function session(write: (b: Buffer) => void, end: () => void, log: MiniServerLog, seqBase: bigint): (chunk: Buffer) => void {
  const decoder = new WkprotoDecoder();
  let crypto: WkSessionCrypto | undefined;
  let uid = '';
  let seq = 0n;
  const send = (p: WkPacket): void => write(encodePacket(p, decoder.version));
  const onPacket = (p: WkPacket): void => {
    if (p.type === PacketType.CONNECT) {
      if (p.token !== 'good') {
        send({ type: PacketType.CONNACK, timeDiff: 0n, reasonCode: ReasonCode.AuthFail, serverKey: '', salt: '' });
        end();
        return;
      }
      const v = negotiateVersion(p.version);
      const kx = serverKeyExchange(p.clientKey);
      crypto = kx.session;
      uid = p.uid;
      decoder.version = v;
      send({
        type: PacketType.CONNACK,
        ...(p.version > 3 ? { serverVersion: v } : {}),
        timeDiff: 0n,
        reasonCode: ReasonCode.Success,
        serverKey: kx.serverKey,
        salt: kx.salt,
        nodeId: 1n,
      });
    } else if (p.type === PacketType.SEND && crypto) {
      const plaintext = crypto.openSend(p);
      log.sends.push({ packet: p, plaintext: plaintext.toString('utf8') });
      seq += 1n;
      const messageSeq = seqBase + seq;
      const messageId = (1n << 60n) + seq;
      send({
        type: PacketType.SENDACK,
        messageId,
        clientSeq: p.clientSeq,
        messageSeq,
        reasonCode: ReasonCode.Success,
        clientMsgNo: p.clientMsgNo,
      });
      send(
        crypto.sealRecv({
          type: PacketType.RECV,
          redDot: true,
          setting: 0,
          msgKey: '',
          fromUid: uid,
          channelId: p.channelId,
          channelType: p.channelType,
          clientMsgNo: p.clientMsgNo,
          messageId,
          messageSeq,
          timestamp: Math.floor(Date.now() / 1000),
          payload: plaintext,
        }),
      );
    } else if (p.type === PacketType.PING) {
      send({ type: PacketType.PONG });
    } else if (p.type === PacketType.RECVACK) {
      log.recvacks.push(p);
    }
  };
  return (chunk) => {
    try {
      decoder.push(chunk, onPacket);
    } catch (e) {
      log.errors.push(e as Error);
      end();
    }
  };
}

/** Starts the mini server. At V6 message seqs start above 2^32 (`seqBase`). */
export async function startMiniServer(seqBase = 0n): Promise<MiniServer> {
  const log: MiniServerLog = { sends: [], recvacks: [], errors: [] };
  const sockets = new Set<Socket>();
  const tcp: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.on(
      'data',
      session(
        (b) => s.write(b),
        () => s.end(),
        log,
        seqBase,
      ),
    );
  });
  tcp.listen(0, '127.0.0.1');
  await once(tcp, 'listening');
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(wss, 'listening');
  wss.on('connection', (ws: WebSocket) => {
    const feed = session(
      (b) => ws.send(b),
      () => ws.close(),
      log,
      seqBase,
    );
    ws.on('message', (data: Buffer) => feed(data));
  });
  return {
    tcpUrl: `tcp://127.0.0.1:${(tcp.address() as AddressInfo).port}`,
    wsUrl: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`,
    log,
    close: async () => {
      for (const s of sockets) s.destroy();
      for (const c of wss.clients) c.terminate();
      await Promise.all([new Promise((r) => tcp.close(r)), new Promise((r) => wss.close(r))]);
    },
  };
}
