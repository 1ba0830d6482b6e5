/**
 * A fixed amount of group delivery work for measuring the generator's cost
 * per delivery (not part of the bench run): a real Parley server (a child,
 * not traced), one group of `members` receivers connected through the
 * bench's own client (`jsonrpc` or `wkproto`; `mosquitto`: the broker and
 * the bench's MQTT client instead), one publisher sending
 * `messages` bodies in windows of `window` (each window waits for all its
 * deliveries), every delivery checked by the ledger. The default window of
 * one message gives each receiver one frame per socket read, as in S2 and
 * the group staircase: larger windows let frames share reads, by timing, so
 * that the count varies from run to run. Run it under
 * `valgrind --tool=callgrind` twice (N and N/2 messages); the difference of
 * the instruction totals over the difference of deliveries is the
 * generator's cost of one delivery, start-up and warm-up cancelled out.
 * With `CALLGRIND_DUMP=1` it also asks callgrind (`callgrind_control -d`) to
 * dump its counts right before and right after the measured phase, so the
 * second dump holds that phase alone (every thread of the process). With
 * `CALLGRIND_SERVER=1` it dumps the server's counts instead, when the server
 * runs under callgrind (`PARLEY_BENCH_SERVER_WRAP`, see
 * bench/callgrind-group-server.sh).
 *
 * It also prints the server's CPU (all its threads, from `/proc`; under a
 * wrapper such as callgrind, the wrapper's) per 1,000 deliveries of the
 * measured phase, each thread group's part, and its own CPU (the
 * generator's) per 1,000: fixed work in a closed loop, 200,000 deliveries
 * with 200 members and 1,000 messages, where S2's phase holds 30,000 read in
 * 10 ms ticks. Eight runs in a row of one build read 10.0-11.7 ms, two later
 * ones 12.0 and 15.1 (S2's JSON-RPC figure moved 20.3-26.3 over seven runs of
 * that build on the same host): a change to the delivery path still needs
 * alternated runs, or callgrind's counts, to show. Pin it away from the
 * server's core:
 *
 *   taskset -c 1 node --conditions=@parley/source --import tsx bench/group-deliveries.ts jsonrpc 200 1000
 *
 *   node --conditions=@parley/source --import tsx bench/group-deliveries.ts jsonrpc 50 400
 */
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readPumpImplementation, readPumpStats } from '@parley/protocol/net';
import { recvBatchStats, setRecvBatchEnabled } from '@parley/protocol/wkproto';
import { installCleanup } from '../src/children.ts';
import { startMosquittoDriver } from '../src/drivers/mosquitto.ts';
import { startParleyDriver } from '../src/drivers/parley.ts';
import { cpuBreakdown } from '../src/proc-stats.ts';
import { encodeBody, PhaseLedgers } from '../src/ledger.ts';
import type { Connection, Deliveries } from '../src/drivers/types.ts';

const [protocol = 'jsonrpc', membersArg = '50', messagesArg = '400', windowArg = '1'] = process.argv.slice(2);
if (protocol !== 'jsonrpc' && protocol !== 'wkproto' && protocol !== 'mosquitto')
  throw new Error(`protocol jsonrpc, wkproto or mosquitto, not ${protocol}`);
// The switches below that concern Parley's server mean nothing for the broker: refused, not ignored.
if (protocol === 'mosquitto') {
  const parleyOnly = ['GD_SERVER_NODE_FLAGS', 'CALLGRIND_SERVER'].filter((k) => (process.env[k] ?? '') !== '');
  if (parleyOnly.length > 0)
    throw new Error(`${parleyOnly.join(' and ')} ${parleyOnly.length > 1 ? 'apply' : 'applies'} to Parley's server, not to mosquitto`);
}
const members = Number(membersArg);
const messages = Number(messagesArg);
const window = Number(windowArg);
const WARMUP = 100;

installCleanup();
// GD_RECV_BATCH=0: the WKProto receivers open each RECV on the in-place path instead of in batches (recv-batch.ts), to compare.
if (process.env.GD_RECV_BATCH === '0') setRecvBatchEnabled(false);
// Under callgrind the server runs for minutes: its once-a-second top sampling would count by the wall clock, not by the work.
const serverEnv: Record<string, string> = process.env.CALLGRIND_SERVER === '1' ? { PARLEY_TOP_COLLECT_INTERVAL: '1h' } : {};
// `mosquitto`: the broker through the bench's MQTT client (mqtt-lite.ts), for the generator's cost per delivery.
const driver =
  protocol === 'mosquitto'
    ? await startMosquittoDriver(() => undefined)
    : await startParleyDriver(
        protocol,
        (process.env.GD_SERVER_NODE_FLAGS ?? '').split(' ').filter((f) => f !== ''),
        undefined,
        serverEnv,
      );
try {
  const uids = Array.from({ length: members }, (_, i) => `gd-m${i}`);
  await driver.provisionUsers(['gd-pub', ...uids]);
  await driver.createGroup('gd-g', uids, ['gd-pub']);
  const phases = new PhaseLedgers();
  const conns: Connection[] = [];
  // Counts deliveries so that a window ends on its last one (no polling timer in the measured work).
  let delivered = 0;
  let target = Infinity;
  let reached: (() => void) | undefined;
  const counted = (uid: string): Deliveries => {
    const r = phases.recipient(uid);
    const tick = (): void => {
      if (++delivered >= target) reached?.();
    };
    return {
      text: (body) => (r.text(body), tick()),
      bytes: (buf, start, end) => (r.bytes(buf, start, end), tick()),
    };
  };
  for (const uid of uids) conns.push(await driver.connect(uid, counted(uid)));
  const pub = await driver.connect('gd-pub', phases.recipient('gd-pub'));
  const run = async (phase: string, count: number): Promise<void> => {
    const ledger = phases.open(phase);
    const stream = `gd:${phase}:0`;
    ledger.expect(stream, uids);
    for (let sent = 0; sent < count;) {
      const k = Math.min(window, count - sent);
      const acks: Promise<void>[] = [];
      for (let i = 0; i < k; i++)
        acks.push(pub.send({ kind: 'group', id: 'gd-g' }, encodeBody(stream, ledger.next(stream), performance.now(), 64)));
      sent += k;
      await Promise.all(acks);
      if (ledger.recordedDeliveries < sent * members) {
        const done = new Promise<void>((resolve) => (reached = resolve));
        target = delivered + sent * members - ledger.recordedDeliveries;
        const timer = setTimeout(() => reached?.(), 120_000);
        await done;
        clearTimeout(timer);
        target = Infinity;
        if (ledger.recordedDeliveries < sent * members)
          throw new Error(`${phase}: ${ledger.recordedDeliveries} of ${sent * members} deliveries`);
      }
    }
    const v = ledger.verdict();
    if (v.lost !== 0 || v.duplicates !== 0 || v.outOfOrder !== 0 || v.foreign !== 0) throw new Error(`${phase}: ${JSON.stringify(v)}`);
    process.stderr.write(`${phase}: ${JSON.stringify(v)}\n`);
  };
  const dump = async (): Promise<void> => {
    if (process.env.CALLGRIND_DUMP === '1') await promisify(execFile)('callgrind_control', ['-d', String(process.pid)]);
    if (process.env.CALLGRIND_SERVER === '1') await promisify(execFile)('callgrind_control', ['-d', String(driver.pid)]);
  };
  await run('warm', WARMUP);
  await dump();
  const before = cpuBreakdown(driver.pid);
  const generatorBefore = process.cpuUsage();
  const pumpBefore = { ...readPumpStats };
  const batchBefore = { ...recvBatchStats };
  await run('measured', messages);
  const generator = process.cpuUsage(generatorBefore);
  const pumpReads = readPumpStats.reads - pumpBefore.reads;
  const pumpBatches = readPumpStats.batches - pumpBefore.batches;
  const after = cpuBreakdown(driver.pid);
  await dump();
  const deliveries = messages * members;
  const spent = (key: string): number => (after[key] ?? 0) - (before[key] ?? 0);
  const threads = Object.keys(after)
    .filter((k) => k.startsWith('thread:'))
    .map((k) => `${k.slice(7)} ${spent(k).toFixed(0)}`)
    .join(', ');
  process.stdout.write(
    `${protocol} ${members} members × ${messages} messages: server CPU ${(((spent('user') + spent('sys')) * 1000) / deliveries).toFixed(2)} ms per 1k deliveries` +
      ` (user ${spent('user').toFixed(0)}, sys ${spent('sys').toFixed(0)} ms; ${threads});` +
      ` this generator ${((generator.user + generator.system) / deliveries).toFixed(2)} ms per 1k` +
      ` (user ${(generator.user / deliveries).toFixed(2)}, sys ${(generator.system / deliveries).toFixed(2)})` +
      ` (reads: ${readPumpImplementation.name}${pumpBatches > 0 ? `, ${pumpReads} in ${pumpBatches} turns` : ''}` +
      `${recvBatchStats.opened > batchBefore.opened ? `; RECVs opened in batches: ${recvBatchStats.opened - batchBefore.opened} reads, ${recvBatchStats.declined - batchBefore.declined} declined` : ''})\n`,
  );
  for (const c of [...conns, pub]) c.close();
} finally {
  await driver.stop();
}
