/**
 * Parley as a target, driven through JSON-RPC over WebSocket or WKProto over
 * TCP; users, groups and offline sync go through the HTTP API.
 */
import { connectJsonRpc } from './jsonrpc-conn.ts';
import { getJson, getText, PERF_HZ, startParley, storeTokens, syncChannel, postJson, tokenOf } from './parley-server.ts';
import { parseWriterTimings } from '../writer-timings.ts';
import { connectWkproto } from './wkproto-conn.ts';
import { generateKeyPair, type WkKeyPair } from '@parley/protocol/wkproto';
import type { Connection, Deliveries, Driver } from './types.ts';

/** Starts a fresh Parley and returns its driver for `protocol`. */
export async function startParleyDriver(
  protocol: 'jsonrpc' | 'wkproto',
  nodeArgs: readonly string[] = [],
  perfFile?: string,
  env: Record<string, string> = {},
  perfHz = PERF_HZ,
): Promise<Driver> {
  const server = await startParley(nodeArgs, perfFile, env, true, perfHz);
  /** Key pairs made by `prepareConnects`, each taken by one WKProto connect. */
  const keyPairs: WkKeyPair[] = [];
  return {
    name: protocol === 'jsonrpc' ? 'parley-jsonrpc' : 'parley-wkproto',
    pid: server.pid,
    durability: 'ack after the group commit is fsynced (store.sync=full, the default)',
    provisionUsers: (uids) => storeTokens(server.api, uids, 1),
    async createGroup(id, members, publishers) {
      await postJson(server.api, '/channel', { channel_id: id, channel_type: 2, subscribers: [...publishers, ...members] });
    },
    connect(uid: string, deliveries: Deliveries): Promise<Connection> {
      return protocol === 'jsonrpc'
        ? connectJsonRpc(server.ws, uid, tokenOf(uid), deliveries)
        : connectWkproto(server.tcp, uid, tokenOf(uid), deliveries, undefined, keyPairs.pop()).catch((e: unknown) =>
            withServerLog(e, server.logTail),
          );
    },
    prepareConnects(count: number): string | undefined {
      if (protocol !== 'wkproto') return undefined;
      keyPairs.length = 0;
      for (let i = 0; i < count; i++) keyPairs.push(generateKeyPair());
      return `${count} client key pairs`;
    },
    prepareOffline: async () => undefined,
    async catchUp(uid, fromUid, expected, sink) {
      const rows = await syncChannel(server.api, uid, fromUid, (body) => sink.text(body));
      if (rows < expected) throw new Error(`sync of ${uid} returned ${rows} of ${expected} rows`);
    },
    async alerts() {
      const snap = (await getJson(server.api, '/top/v1/snapshot')) as {
        alerts: { active: Array<{ severity: string; message: string }>; recent: Array<{ severity: string; message: string }> };
      };
      const out: Record<string, number> = {};
      for (const a of [...snap.alerts.active, ...snap.alerts.recent]) {
        const key = `alerts.${a.severity}:${a.message}`;
        out[key] = (out[key] ?? 0) + 1;
      }
      return out;
    },
    writerTimings: async () => parseWriterTimings(await getText(server.api, '/metrics')),
    stop: () => server.stop(),
  };
}

/**
 * Rethrows a failed connect's error (rare) with the server's last log lines
 * (audit lines left out), read once the server has had a moment to see the
 * client go: whether it had the CONNECT and what its answer waited for.
 */
async function withServerLog(e: unknown, logTail: () => string): Promise<never> {
  await new Promise((r) => setTimeout(r, 300));
  if (e instanceof Error) {
    const lines = logTail()
      .split('\n')
      .filter((l) => l !== '' && !l.includes('"audit":'));
    e.message += `\nserver log (last lines):\n${lines.slice(-8).join('\n')}`;
  }
  throw e;
}
