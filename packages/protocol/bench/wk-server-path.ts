/**
 * The server's WKProto work for one 1:1 message, in a loop, for callgrind (not
 * a test): a SEND decoded by the stream decoder, its msg_key verified and its
 * payload decrypted (openSend), the SENDACK encoded, the RECV template built
 * and sealed for the recipient's session, the recipient's RECVACK read. No
 * sockets, store or fan-out: the protocol part of bench/send-path.ts's figure
 * in apps/bench, without its timing-dependent batching. `PROTOCOL_DIST` is a
 * build's `packages/protocol/dist` (this one's or an older commit's, for a
 * before/after pair). With WK_PATH_DUMP set it prints `warm` and `done` and
 * waits for a line on stdin after each, so a driver can `callgrind_control -d`
 * around the measured phase (see wk-server-path.sh).
 *
 *   node --import tsx bench/wk-server-path.ts PROTOCOL_DIST [messages] [warmup]
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type * as Wk from '../src/wkproto/index.ts';

const [dist = 'dist', messagesArg = '10000', warmArg = '5000'] = process.argv.slice(2);
const wk = (await import(resolve(dist, 'wkproto/index.js'))) as typeof Wk;
const { PacketType, WkSessionCrypto, WkprotoDecoder } = wk;
const messages = Number(messagesArg);
const warmup = Number(warmArg);
const VERSION = 5;
/** Distinct SENDs and RECVACKs, reused round-robin (building them is not measured). */
const POOL = 1000;

const senderClient = new WkSessionCrypto('0123456789abcdef', 'saltsaltsaltsalt');
const senderServer = new WkSessionCrypto('0123456789abcdef', 'saltsaltsaltsalt');
const recipientServer = new WkSessionCrypto('fedcba9876543210', 'SALTsaltSALTsalt');
const sends: Buffer[] = [];
const recvacks: Buffer[] = [];
for (let i = 0; i < POOL; i++) {
  // The bench's 64-byte body and client_msg_no shape.
  const text = `sp:measured:${i % 20}|${i}|${(123456.789 + i).toFixed(3)}|`;
  const payload = Buffer.from(text.padEnd(64, 'x'));
  const sealed = senderClient.sealSend({
    type: PacketType.SEND,
    redDot: true,
    setting: 0,
    clientSeq: i + 1,
    clientMsgNo: randomUUID().replace(/-/g, ''),
    channelId: `sp-b${i % 20}`,
    channelType: 1,
    msgKey: '',
    payload,
  });
  sends.push(wk.encodePacket(sealed, VERSION));
  recvacks.push(wk.encodeRecvack(1_957_234_823_423_213_568n + BigInt(i), BigInt(i + 1), VERSION));
}

const decoder = new WkprotoDecoder({ version: VERSION });
const ackDecoder = new WkprotoDecoder({ version: VERSION });
let acked = 0;
ackDecoder.onRecvackBody = (buf, start, end) => {
  if (wk.recvackMessageIdText(buf, start, end, VERSION) !== '0') acked++;
};
let written = 0;
let n = 0;
const onSend = (p: Wk.WkPacket): void => {
  if (p.type !== PacketType.SEND) throw new Error(`packet type ${p.type}`);
  const payload = senderServer.openSend(p);
  const id = 1_957_234_823_423_213_568n + BigInt(n);
  written += wk.encodeSendack(id, p.clientSeq, BigInt(n + 1), 1, p.clientMsgNo, VERSION).length;
  const recv: Wk.RecvPacket = {
    type: PacketType.RECV,
    redDot: true,
    setting: 0,
    msgKey: '',
    fromUid: `sp-a${n % 20}`,
    channelId: `sp-a${n % 20}`,
    channelType: 1,
    expire: 0,
    clientMsgNo: p.clientMsgNo,
    messageId: id,
    messageSeq: BigInt(n + 1),
    timestamp: 1_764_350_000,
    topic: '',
    payload,
  };
  written += recipientServer.sealRecvFrame(wk.recvTemplate(recv, payload.length, VERSION), payload).length;
};
const run = (from: number, to: number): void => {
  for (n = from; n < to; n++) {
    decoder.push(sends[n % POOL]!, onSend);
    ackDecoder.push(recvacks[n % POOL]!, () => undefined);
  }
};
const step = async (what: string): Promise<void> => {
  if (!process.env.WK_PATH_DUMP) return;
  process.stdout.write(`${what}\n`);
  await new Promise((r) => process.stdin.once('data', r));
};

run(0, warmup);
await step('warm');
run(warmup, warmup + messages);
await step('done');
process.stdin.pause();
if (acked !== warmup + messages) throw new Error(`${acked} recvacks read`);
process.stderr.write(`${messages} messages, ${written} bytes written\n`);
