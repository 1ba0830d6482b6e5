/**
 * Instructions per call of one WKProto session-crypto operation, for callgrind
 * (not a test): `seal` (WkSessionCrypto.sealRecvFrame, what the server does per
 * recipient of a RECV), `decrypt` (a SEND's payload) or `template`
 * (recvTemplate, what the server builds per message and view), over 100
 * sessions (or messages) in turn with the bench's 64-byte body shape. After a warm-up it asks callgrind
 * to dump, makes `calls` calls and dumps again, so the second dump holds them
 * alone (see crypto-calls.sh, which also compiles synchronously so that two
 * builds tier up alike). `PROTOCOL_DIST` is a build's `packages/protocol/dist`
 * (this one's or an older commit's, for a before/after pair).
 *
 *   node --import tsx bench/crypto-calls.ts PROTOCOL_DIST seal|decrypt|template [calls] [warmup]
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import type * as Wk from '../src/wkproto/index.ts';

const [dist = 'dist', op = 'seal', callsArg = '20000', warmArg = '20000'] = process.argv.slice(2);
if (op !== 'seal' && op !== 'decrypt' && op !== 'template') throw new Error(`operation seal, decrypt or template, not ${op}`);
const wk = (await import(resolve(dist, 'wkproto/index.js'))) as typeof Wk;
const { PacketType, WkSessionCrypto, recvTemplate } = wk;
const SESSIONS = 100;

const sessions = Array.from(
  { length: SESSIONS },
  (_, i) => new WkSessionCrypto(`k${String(i).padStart(15, '0')}`, `iv${String(i).padStart(14, '0')}`),
);
const plain = Buffer.from('sp:measured:7|123456|123456.789|'.padEnd(64, 'x'));
const recv = (i: number): Wk.RecvPacket => ({
  type: PacketType.RECV,
  setting: 0,
  msgKey: '',
  fromUid: `u-${String(i).padStart(6, '0')}`,
  channelId: 'g-0004',
  channelType: 2,
  clientMsgNo: `cmn-${1234567 + i}`,
  messageId: 1957234823423213568n + BigInt(i),
  messageSeq: 4123n + BigInt(i),
  timestamp: 1785398400,
  payload: Buffer.alloc(0),
});
const packets = Array.from({ length: SESSIONS }, (_, i) => recv(i));
const template = recvTemplate(recv(123), plain.length, 4);
const wires = sessions.map((s) => s.encrypt(plain));

function call(i: number): number {
  const k = i % SESSIONS;
  if (op === 'template') return recvTemplate(packets[k]!, plain.length, 4).signPrefixBytes.length;
  return op === 'seal' ? sessions[k]!.sealRecvFrame(template, plain).length : sessions[k]!.decrypt(wires[k]!).length;
}

let sum = 0;
function run(n: number): void {
  for (let i = 0; i < n; i++) sum += call(i);
}

/** Asks callgrind (when this runs under it) to dump its counts so far. */
function dump(): void {
  try {
    execFileSync('callgrind_control', ['-d', String(process.pid)], { stdio: 'ignore' });
  } catch {
    // Not under callgrind: nothing to dump.
  }
}

run(Number(warmArg));
dump();
run(Number(callsArg));
dump();
console.log(`${op}: ${callsArg} calls (${sum} bytes)`);
