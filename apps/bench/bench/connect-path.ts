/**
 * A fixed number of connects for measuring the SERVER's instructions per
 * connect under callgrind (not part of the bench run; see
 * bench/callgrind-connect-server.sh, which starts the server under callgrind
 * through `PARLEY_BENCH_SERVER_WRAP`). A fresh Parley, `connects` users given
 * tokens over HTTP, then `warm` connects made and closed (0: the measured
 * connects meet a fresh server, as S4's storm does). Once the server is idle
 * callgrind is asked to dump (`callgrind_control -d`), `connects` clients
 * connect and authenticate through the bench's own client (`jsonrpc` or
 * `wkproto`), `SETUP_CONCURRENCY` (50) at a time as S4's storm keeps at most
 * 50 in flight, and callgrind dumps again: each thread's second dump holds the
 * connects alone (the TCP accept, the WebSocket upgrade for JSON-RPC, the key
 * exchange for WKProto, the token check and the CONNECT's answer), the
 * compilation the server's JIT does for them included.
 *
 *   node --conditions=@parley/source --import tsx bench/connect-path.ts jsonrpc [connects] [warm]
 *
 * Without `CALLGRIND_SERVER=1` it dumps nothing and only prints the server's
 * CPU (from `/proc`) per 1,000 connects of the measured phase.
 */
import process from 'node:process';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { installCleanup } from '../src/children.ts';
import { connectJsonRpc } from '../src/drivers/jsonrpc-conn.ts';
import { startParley, storeTokens, tokenOf } from '../src/drivers/parley-server.ts';
import { connectWkproto } from '../src/drivers/wkproto-conn.ts';
import { cpuBreakdown, cpuMs } from '../src/proc-stats.ts';
import { PhaseLedgers } from '../src/ledger.ts';
import { closeAll, connectAll } from '../src/scenarios/common.ts';
import type { Connection, Deliveries } from '../src/drivers/types.ts';

const [protocol = 'jsonrpc', connectsArg = '500', warmArg = '0'] = process.argv.slice(2);
if (protocol !== 'jsonrpc' && protocol !== 'wkproto') throw new Error(`protocol jsonrpc or wkproto, not ${protocol}`);
const connects = Number(connectsArg);
const warm = Number(warmArg);
if (!Number.isInteger(connects) || connects < 1 || connects > 20_000) throw new Error(`connects: 1 to 20000, not ${connectsArg}`);
if (!Number.isInteger(warm) || warm < 0 || warm > 20_000) throw new Error(`warm: 0 to 20000, not ${warmArg}`);

installCleanup();
const traced = process.env.CALLGRIND_SERVER === '1';
// Under callgrind the server runs for minutes: its once-a-second top sampling would count by the wall clock, not by the work.
const server = await startParley(
  (process.env.CP_SERVER_NODE_FLAGS ?? '').split(' ').filter((f) => f !== ''),
  undefined,
  traced ? { PARLEY_TOP_COLLECT_INTERVAL: '1h' } : {},
);
// Connects under callgrind take seconds each while the server's JIT is cold: a long timeout.
const connect = (uid: string, d: Deliveries): Promise<Connection> =>
  protocol === 'jsonrpc'
    ? connectJsonRpc(server.ws, uid, tokenOf(uid), d, 300_000)
    : connectWkproto(server.tcp, uid, tokenOf(uid), d, 300_000);
try {
  const uids = Array.from({ length: connects }, (_, i) => `cp-u${i}`);
  await storeTokens(server.api, uids, 1);
  const phases = new PhaseLedgers();
  phases.open('connects');
  /**
   * Waits until the server has used under 10% of a core for a whole second (an idle server under
   * callgrind takes some 4% for its timers). Under callgrind it takes many seconds to finish what
   * came before (the token set-up, a warm-up round's closes), which must not fall into the
   * measured phase.
   */
  const quiet = async (): Promise<void> => {
    for (let last = cpuMs(server.pid), deadline = Date.now() + 600_000; Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = cpuMs(server.pid);
      if (now - last < 100) return;
      last = now;
    }
    throw new Error('the server did not become idle in 600 s');
  };
  if (warm > 0) {
    // The same users, connected and closed in rounds of at most `connects`.
    for (let done = 0; done < warm; done += connects) {
      const round = await connectAll({ connect }, uids.slice(0, Math.min(connects, warm - done)), (uid) => phases.recipient(uid));
      closeAll(round);
      await quiet();
    }
  }
  await quiet();
  const dump = async (): Promise<void> => {
    if (traced) await promisify(execFile)('callgrind_control', ['-d', String(server.pid)]);
  };
  await dump();
  const before = cpuBreakdown(server.pid);
  const conns = await connectAll({ connect }, uids, (uid) => phases.recipient(uid));
  const after = cpuBreakdown(server.pid);
  await dump();
  const spent = (key: string): number => (after[key] ?? 0) - (before[key] ?? 0);
  process.stdout.write(
    `${protocol} ${connects} connects (${warm} before): server CPU ${(((spent('user') + spent('sys')) * 1000) / connects).toFixed(0)} ms per 1k` +
      ` (user ${spent('user').toFixed(0)}, sys ${spent('sys').toFixed(0)} ms)\n`,
  );
  closeAll(conns);
} finally {
  await server.stop();
}
