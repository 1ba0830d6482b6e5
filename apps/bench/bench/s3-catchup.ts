/**
 * Measurement harness for S3's mosquitto catch-up on the generator's side (not part of the bench run):
 * reads, PUBACK writes and rows per read, and (STRACE=1) the generator's syscalls during the catch-up alone.
 *   node --conditions=@parley/source --import tsx bench/s3-catchup.ts [MESSAGES] [USERS] [CONCURRENCY]
 */
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { installCleanup } from '../src/children.ts';
import { startMosquittoDriver } from '../src/drivers/mosquitto.ts';
import { MqttLite } from '../src/drivers/mqtt-lite.ts';
import { Ledger, encodeBody } from '../src/ledger.ts';
import { startCpuMeter } from '../src/proc-stats.ts';
import { pool, sleep } from '../src/stats.ts';
import { pinSelf } from '../src/pinning.ts';

const [messages = 50_000, users = 100, concurrency = 10] = process.argv.slice(2).map(Number);
installCleanup();
pinSelf(1);
let reads = 0;
let ackWrites = 0;
const proto = MqttLite.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
const onData = proto.onData!;
const flushAcks = proto.flushAcks!;
proto.onData = function (this: unknown, ...a: unknown[]) {
  reads++;
  return onData.apply(this, a);
};
proto.flushAcks = function (this: unknown, ...a: unknown[]) {
  ackWrites++;
  return flushAcks.apply(this, a);
};
const driver = await startMosquittoDriver((l) => process.stderr.write(l + '\n'));
try {
  const round = async (prefix: string, n: number, count: number, traced: boolean): Promise<void> => {
    const ledger = new Ledger();
    const rcv = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    await driver.provisionUsers(['s3src', ...rcv]);
    for (const r of rcv) {
      ledger.expect(`s3:${r}`, [r]);
      await driver.prepareOffline(r);
    }
    const sender = await driver.connect('s3src', { text: () => undefined, bytes: () => undefined });
    await pool(
      Array.from({ length: count }, (_, i) => i),
      200,
      async (i) => {
        const to = rcv[i % n]!;
        await sender.send({ kind: 'user', id: to }, encodeBody(`s3:${to}`, ledger.next(`s3:${to}`), performance.now(), 64));
      },
    );
    sender.close();
    let strace;
    const out = `/tmp/gen/strace-${process.pid}.txt`;
    if (traced) {
      strace = spawn('strace', ['-f', '-c', '-o', out, '-p', String(process.pid)], { stdio: 'ignore' });
      await sleep(1000);
    }
    reads = 0;
    ackWrites = 0;
    const meter = startCpuMeter(driver.pid, 'catch-up');
    await pool(rcv, concurrency, (uid, i) =>
      driver.catchUp(uid, 's3src', Math.floor(count / n) + (i < count % n ? 1 : 0), ledger.recipient(uid)),
    );
    const cpu = meter.read();
    if (strace) {
      strace.kill('SIGINT');
      await new Promise((r) => strace.once('exit', r));
    }
    const v = ledger.verdict();
    const rows = ledger.recordedDeliveries;
    console.log(
      `${prefix}: rows ${rows} lost ${v.lost} dup ${v.duplicates} ooo ${v.outOfOrder}; reads ${reads} (${(rows / reads).toFixed(1)} rows/read), ` +
        `ack writes ${ackWrites}; wall ${cpu.wallMs.toFixed(0)} ms, server ${cpu.serverMs} ms, generator ${cpu.generatorMs.toFixed(0)} ms ` +
        `(${JSON.stringify(cpu.generatorBreakdownMs)})`,
    );
    if (strace) console.log(readFileSync(out, 'utf8'));
  };
  await round('w', 10, messages / 10, false);
  await round('u', users, messages, process.env.STRACE === '1');
} finally {
  await driver.stop();
}
