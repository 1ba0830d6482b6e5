import { connect as tcpConnect, type Socket } from 'node:net';
import { encodePacket, generateKeyPair, PacketType, WkprotoDecoder, type WkPacket } from '@parley/protocol/wkproto';

/** A real WKProto client over raw TCP that can stop reading, like a stalled phone or a stuck consumer. */
export interface SlowClient {
  socket: Socket;
  /** Stops reading: bytes pile up in the kernel buffers, then in the server's outbound buffer. */
  stopReading(): void;
  close(): void;
}

/** Connects `uid` (token already stored for device flag 1) at protocol version 6 and waits for a successful CONNACK. */
export async function connectSlowClient(tcpUrl: string, uid: string, token: string): Promise<SlowClient> {
  const socket = tcpConnect(Number(tcpUrl.split(':').at(-1)), '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => undefined);
  const decoder = new WkprotoDecoder({ version: 6 });
  const connack = new Promise<WkPacket>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no CONNACK within 5 s')), 5000);
    socket.on('data', (chunk) =>
      decoder.push(chunk, (p) => {
        clearTimeout(timer);
        resolve(p);
      }),
    );
  });
  const keys = generateKeyPair();
  socket.write(
    encodePacket(
      {
        type: PacketType.CONNECT,
        version: 6,
        deviceFlag: 1,
        deviceId: `${uid}-slow`,
        uid,
        token,
        clientTimestamp: BigInt(Date.now()),
        clientKey: keys.publicKey,
      },
      6,
    ),
  );
  const ack = await connack;
  if (ack.type !== PacketType.CONNACK || ack.reasonCode !== 1)
    throw new Error(`connect refused: ${JSON.stringify(ack, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
  return {
    socket,
    stopReading: () => {
      socket.removeAllListeners('data');
      socket.pause();
    },
    close: () => socket.destroy(),
  };
}
