/**
 * WKProto over TCP with per-session X25519 + AES (the default of the SDKs):
 * every SEND is encrypted and signed, every RECV verified, decrypted and
 * acknowledged with RECVACK.
 */
import { WkprotoClient } from '@parley/protocol/wkproto';
import type { Connection, Destination, OnMessage } from './types.ts';

/** Connects `uid` over `tcp://…`; resolves after a successful CONNACK. */
export async function connectWkproto(
  tcp: string,
  uid: string,
  token: string,
  onMessage: OnMessage,
  timeoutMs = 10_000,
): Promise<Connection> {
  const client = new WkprotoClient({
    url: tcp,
    uid,
    token,
    deviceFlag: 1,
    deviceId: `${uid}-bench`,
    encrypt: true,
    autoRecvAck: true,
    bufferMessages: false,
    timeoutMs,
  });
  client.on('recv', (m: { payload: Buffer }) => onMessage(m.payload.toString('utf8')));
  client.on('recv-error', () => onMessage('undecryptable'));
  client.on('close', () => undefined);
  await client.connect();
  return {
    async send(to: Destination, body: string) {
      const ack = await client.send({ channelId: to.id, channelType: to.kind === 'user' ? 1 : 2, payload: body });
      if (ack.reasonCode !== 1) throw new Error(`SENDACK reason ${ack.reasonCode}`);
    },
    close() {
      client.close();
    },
  };
}
