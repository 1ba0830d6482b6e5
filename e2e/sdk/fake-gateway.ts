/**
 * A tiny WebSocket WKProto gateway built from @parley/protocol's wkproto
 * library, for proving the SDK harness (and the library) against the real
 * client: it decodes the SDK's frames, answers CONNECT with a real key
 * exchange, decrypts SENDs, and can push sealed RECVs. 127.0.0.1 only.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  encodePacket,
  negotiateVersion,
  PacketType,
  ReasonCode,
  serverKeyExchange,
  WkprotoDecoder,
  type ConnectPacket,
  type RecvackPacket,
  type RecvPacket,
  type SendPacket,
  type WkPacket,
  type WkSessionCrypto,
} from '@parley/protocol/wkproto';

/** One accepted WebSocket session. */
export interface GatewaySession {
  ws: WebSocket;
  decoder: WkprotoDecoder;
  connect?: ConnectPacket;
  crypto?: WkSessionCrypto;
  /** Decoded frames in arrival order. */
  frames: WkPacket[];
  sends: { packet: SendPacket; plaintext: string }[];
  recvacks: RecvackPacket[];
  errors: Error[];
}

/** Fields of a RECV to push; plaintext payload, sealed by the gateway. */
export type PushRecv = Omit<RecvPacket, 'type' | 'msgKey' | 'setting' | 'payload'> & { setting?: number; payload: string };

/** A running fake gateway. */
export interface FakeGateway {
  url: string;
  sessions: GatewaySession[];
  /** Resolves with the next session that has decoded a CONNECT. */
  nextConnect(ms?: number): Promise<GatewaySession>;
  /** Waits until `pred` holds, polling every 10 ms. */
  until<T>(pred: () => T | undefined, ms?: number): Promise<T>;
  /** Encodes packets at the session version, one WS message each (or all in one with `coalesce`). */
  write(s: GatewaySession, packets: WkPacket[], coalesce?: boolean): void;
  /** Seals (encrypts + signs) and writes a RECV. */
  pushRecv(s: GatewaySession, r: PushRecv, coalesceWith?: WkPacket[]): RecvPacket;
  close(): Promise<void>;
}

/** Starts the gateway; `answerConnect: false` records CONNECT without replying. */
export async function startFakeGateway(opts: { answerConnect?: boolean; messageSeqStart?: bigint } = {}): Promise<FakeGateway> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(wss, 'listening');
  const sessions: GatewaySession[] = [];
  let nextId = 1957234823423213568n;
  let nextSeq = opts.messageSeqStart ?? 1n;

  const write = (s: GatewaySession, packets: WkPacket[], coalesce = false): void => {
    const frames = packets.map((p) => encodePacket(p, s.decoder.version));
    if (coalesce) s.ws.send(Buffer.concat(frames));
    else for (const f of frames) s.ws.send(f);
  };

  const onPacket = (s: GatewaySession, p: WkPacket): void => {
    s.frames.push(p);
    if (p.type === PacketType.CONNECT) {
      s.connect = p;
      if (opts.answerConnect === false) return;
      const v = negotiateVersion(p.version);
      const kx = serverKeyExchange(p.clientKey);
      s.crypto = kx.session;
      s.decoder.version = v;
      write(s, [
        {
          type: PacketType.CONNACK,
          ...(p.version > 3 ? { serverVersion: v } : {}),
          timeDiff: 0n,
          reasonCode: ReasonCode.Success,
          serverKey: kx.serverKey,
          salt: kx.salt,
          nodeId: 1n,
        },
      ]);
    } else if (p.type === PacketType.SEND && s.crypto) {
      const plaintext = s.crypto.openSend(p).toString('utf8');
      s.sends.push({ packet: p, plaintext });
      const messageId = nextId++;
      const messageSeq = nextSeq++;
      write(s, [
        {
          type: PacketType.SENDACK,
          messageId,
          clientSeq: p.clientSeq,
          messageSeq,
          reasonCode: ReasonCode.Success,
          clientMsgNo: p.clientMsgNo,
        },
      ]);
    } else if (p.type === PacketType.PING) {
      write(s, [{ type: PacketType.PONG }]);
    } else if (p.type === PacketType.RECVACK) {
      s.recvacks.push(p);
    }
  };

  wss.on('connection', (ws) => {
    const s: GatewaySession = { ws, decoder: new WkprotoDecoder(), frames: [], sends: [], recvacks: [], errors: [] };
    sessions.push(s);
    ws.on('message', (data: Buffer) => {
      try {
        s.decoder.push(data, (p) => onPacket(s, p));
      } catch (e) {
        s.errors.push(e as Error);
        ws.close();
      }
    });
  });

  const until = async <T>(pred: () => T | undefined, ms = 5000): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = pred();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  let seen = 0;
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`,
    sessions,
    until,
    write,
    nextConnect: async (ms = 5000) => {
      const s = await until(() => sessions.slice(seen).find((x) => x.connect), ms);
      seen = sessions.indexOf(s) + 1;
      return s;
    },
    pushRecv: (s, r, coalesceWith) => {
      if (!s.crypto) throw new Error('session has no keys');
      const sealed = s.crypto.sealRecv({
        ...r,
        type: PacketType.RECV,
        setting: r.setting ?? 0,
        msgKey: '',
        payload: Buffer.from(r.payload),
      });
      write(s, [...(coalesceWith ?? []), sealed], coalesceWith !== undefined);
      return sealed;
    },
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise((r) => wss.close(r));
    },
  };
}
