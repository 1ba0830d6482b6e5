/**
 * WKProto over TCP with per-session X25519 + AES (the default of the SDKs):
 * every SEND is encrypted and signed, every RECV verified, decrypted and
 * acknowledged with RECVACK. RECVs take the client's in-place path
 * (`onPayload`): the same checks without a packet object or strings per
 * delivery, the plaintext handed to the ledger as bytes, the RECVACKs of one
 * socket read in one write.
 */
import { WkprotoClient } from '@parley/protocol/wkproto';
import type { Connection, Deliveries, Destination } from './types.ts';

/** Connects `uid` over `tcp://…`; resolves after a successful CONNACK. */
export async function connectWkproto(
  tcp: string,
  uid: string,
  token: string,
  deliveries: Deliveries,
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
    onPayload: (buf, start, end) => deliveries.bytes(buf, start, end),
  });
  // A RECV whose msg_key or decryption fails is dropped by the client: counted as foreign.
  client.on('recv-error', () => deliveries.text('undecryptable'));
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
