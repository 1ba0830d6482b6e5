/**
 * WKProto over TCP with per-session X25519 + AES (the default of the SDKs):
 * every SEND is encrypted and signed, every RECV verified, decrypted and
 * acknowledged with RECVACK. RECVs take the client's in-place path
 * (`onPayload`): the same checks without a packet object or strings per
 * delivery, the plaintext handed to the ledger as bytes, the RECVACKs of one
 * socket read in one write.
 */
import { execFileSync } from 'node:child_process';
import { WkprotoClient, type WkKeyPair } from '@parley/protocol/wkproto';
import { deadline } from '../deadlines.ts';
import type { Connection, Deliveries, Destination } from './types.ts';

/** How long before the CONNACK timeout the kernel's view of a connection still waiting is taken, ms. */
const SNAPSHOT_LEAD_MS = 1000;
/**
 * Kernel views taken per process. Each is two synchronous `ss` runs on the generator's event
 * loop: when many connects wait at once (a storm meeting a stalled server), a view for each
 * would stall the generator itself, so that more connects time out; the first few say enough.
 */
const MAX_SNAPSHOTS = 3;
let snapshotsTaken = 0;

/**
 * Both ends of the TCP connection on local port `port` and the listener on
 * `serverPort`, as `ss` sees them (queues: Recv-Q is what the owner has not
 * read, Send-Q what the peer has not acknowledged; for the listener, Recv-Q
 * is connections waiting to be accepted). Only taken for a connect about to
 * time out.
 */
function kernelView(port: number | undefined, serverPort: string): string {
  if (port === undefined) return 'no local port';
  try {
    const conn = execFileSync('ss', ['-tnoip', `( sport = :${port} or dport = :${port} )`], { timeout: 2000 }).toString();
    const listener = execFileSync('ss', ['-tnl', `( sport = :${serverPort} )`], { timeout: 2000 }).toString();
    return `${conn}${listener.split('\n').slice(1).join('\n')}`;
  } catch (e) {
    return `ss failed: ${(e as Error).message}`;
  }
}

/** Connects `uid` over `tcp://…`; resolves after a successful CONNACK. `keyPair`: one made in advance for this connect (else a fresh one). */
export async function connectWkproto(
  tcp: string,
  uid: string,
  token: string,
  deliveries: Deliveries,
  timeoutMs = 10_000,
  keyPair?: WkKeyPair,
): Promise<Connection> {
  const client = new WkprotoClient({
    url: tcp,
    uid,
    token,
    deviceFlag: 1,
    deviceId: `${uid}-bench`,
    encrypt: true,
    ...(keyPair ? { keyPair } : {}),
    autoRecvAck: true,
    bufferMessages: false,
    timeoutMs,
    onPayload: (buf, start, end) => deliveries.bytes(buf, start, end),
  });
  // A RECV whose msg_key or decryption fails is dropped by the client: counted as foreign.
  client.on('recv-error', () => deliveries.text('undecryptable'));
  client.on('close', () => undefined);
  // A connect still waiting just before its timeout: take the kernel's view of both ends then, before
  // the client closes the socket, so the error can tell a CONNECT the server never read from a CONNACK
  // the client never read (a rare timeout in S2 could not be reproduced; this says which side next time).
  let snapshot: string | undefined;
  const cancel = deadline(Math.max(0, timeoutMs - SNAPSHOT_LEAD_MS), () => {
    const kernel =
      snapshotsTaken < MAX_SNAPSHOTS
        ? (snapshotsTaken++, kernelView(client.localPort, new URL(tcp).port))
        : `(no kernel view: ${MAX_SNAPSHOTS} taken already in this process)`;
    snapshot = `at ${timeoutMs - SNAPSHOT_LEAD_MS} ms: ${client.describeConnection()}\n${kernel}`;
  });
  try {
    await client.connect();
  } catch (e) {
    if (snapshot !== undefined && e instanceof Error) e.message += `\n${uid} ${snapshot}`;
    throw e;
  } finally {
    cancel();
  }
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
