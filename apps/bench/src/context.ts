/** The run's context for the JSON document: git revision, machine, versions. */
import process from 'node:process';
import { execFileSync } from 'node:child_process';
import { cpus, totalmem, release, availableParallelism } from 'node:os';
import { readPumpImplementation } from '@parley/protocol/net';
import { wkcryptoImplementation } from '@parley/protocol/wkproto';
import { createRequire } from 'node:module';
import { buildInUse } from '@parley/sqlite-build';
import { clockTicks } from './proc-stats.ts';

/** Which SQLite build better-sqlite3 loads (`@parley/sqlite-build`): the server loads the same module. */
function sqliteBuild(): string {
  try {
    return buildInUse();
  } catch (err) {
    return `unknown (${(err as Error).message})`;
  }
}

function walBufferBuilt(): boolean {
  try {
    return (createRequire(import.meta.url)('@parley/sqlite-walbuf') as { path: string | undefined }).path !== undefined;
  } catch {
    return false;
  }
}

const run = (cmd: string, args: string[]): string | undefined => {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (e) {
    // `mosquitto -h` prints its version and exits non-zero.
    const out = (e as { stdout?: string }).stdout;
    return out ? out.trim() : undefined;
  }
};

/** Git revision of the working tree (with `-dirty` when it has uncommitted changes). */
export function gitRevision(): string | undefined {
  return run('git', ['describe', '--always', '--dirty', '--abbrev=12']);
}

/** What the run executed on. */
export function machine(): Record<string, unknown> {
  const c = cpus();
  return {
    cpuModel: c[0]?.model,
    logicalCpus: c.length,
    availableParallelism: availableParallelism(),
    memoryMiB: Math.round(totalmem() / 1024 / 1024),
    kernel: release(),
    node: process.version,
    clockTicks: clockTicks(),
    mosquitto: run('mosquitto', ['-h'])?.split('\n')[0] ?? run('/usr/sbin/mosquitto', ['-h'])?.split('\n')[0],
    // WKProto's session crypto in the generator and (same build, same PARLEY_WKCRYPTO) the server.
    wkcrypto: wkcryptoImplementation.name,
    // Socket reads in the generator and (same build, same PARLEY_READPUMP) the server: `pump` or `per-read`.
    readPump: readPumpImplementation.name,
    // The server's store.sqlite_wal_buffer (PARLEY_STORE_SQLITE_WAL_BUFFER, passed on) and whether the extension is built.
    walBuffer: `${process.env.PARLEY_STORE_SQLITE_WAL_BUFFER ?? 'auto'}, ${walBufferBuilt() ? 'built' : 'not built'}`,
    // better-sqlite3's SQLite: Parley's page-cache change built in (`patched`) or not (`stock`).
    sqlite: sqliteBuild(),
  };
}
