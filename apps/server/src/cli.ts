import process from 'node:process';
import { Command } from 'commander';
import type { ListeningEvent } from '@parley/shared';
import { ConfigError, loadConfig, redactedValues, type Config } from './config/config.ts';
import { versionInfo } from '@parley/shared/version';
import { lowerHelperThreads } from './thread-priority.ts';

// `start` loads the server (Fastify, the store, the gateway) when it runs, so
// `version` and `config validate` answer without loading it.

function load(file: string | undefined): Config {
  return loadConfig(file ?? process.env.PARLEY_CONFIG);
}

function fail(err: unknown): never {
  if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
  else process.stderr.write(`parley: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
}

/**
 * `npx parley start` runs the server under `sh -c`, and npm passes a SIGTERM
 * to that shell only: the shell dies and the server would keep running with
 * its ports bound. So when npm launched us (it sets `npm_command`), the
 * server also stops once its parent is gone, as if it had been sent SIGTERM.
 */
function watchLauncher(stop: (signal: string) => void): void {
  if (process.env.npm_command === undefined) return;
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop('SIGTERM (launcher exited)');
  }, 250).unref();
}

const program = new Command('parley')
  .description('Parley instant-messaging server')
  .version(versionInfo().version, '-V, --version', 'print the version');

program
  .command('start')
  .description('run the server (store: SQLite in node.data_dir, or PostgreSQL with store.driver = "postgres")')
  .option('-c, --config <file>', 'TOML config file (default: $PARLEY_CONFIG)')
  .action(async (opts: { config?: string }) => {
    let config: Config;
    try {
      config = load(opts.config);
    } catch (err) {
      fail(err);
    }
    const [{ createLogger }, { startServer }] = await Promise.all([import('./log.ts'), import('./server.ts')]);
    const log = createLogger(config.log.level);
    const server = await startServer(config, log).catch(fail);
    // After the store started (its threads have named themselves) and before any load.
    const helperThreads = lowerHelperThreads();
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'stopping');
      server.close().then(
        () => process.exit(0),
        (err: unknown) => {
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    // Before the `listening` line: a supervisor may stop the server as soon as it reads it.
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    watchLauncher(stop);
    const addr = (a: { address: string; port: number }) => `${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}`;
    const listening: ListeningEvent = {
      event: 'listening',
      node_id: config.node.id,
      api: addr(server.addresses.api),
      ws: addr(server.addresses.ws),
      tcp: addr(server.addresses.tcp),
      data_dir: config.node.dataDir,
    };
    process.stdout.write(`${JSON.stringify(listening)}\n`);
    const { wkcryptoImplementation } = await import('@parley/protocol/wkproto');
    const { readPumpImplementation } = await import('@parley/protocol/net');
    log.info(
      {
        api: addr(server.addresses.api),
        ws: addr(server.addresses.ws),
        wkcrypto: wkcryptoImplementation.name,
        readPump: readPumpImplementation.name,
        helperThreads,
      },
      'parley started',
    );
  });

const configCmd = program.command('config').description('configuration tools');
configCmd
  .command('validate')
  .description('check a config file and the PARLEY_* environment; list every problem')
  .option('-c, --config <file>', 'TOML config file (default: $PARLEY_CONFIG)')
  .action((opts: { config?: string }) => {
    try {
      const config = load(opts.config);
      process.stdout.write(`${JSON.stringify({ valid: true, config: redactedValues(config) }, null, 2)}\n`);
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stdout.write(`${JSON.stringify({ valid: false, problems: err.problems }, null, 2)}\n`);
        process.exit(2);
      }
      fail(err);
    }
  });

const storeCmd = program.command('store').description('store tools');
storeCmd
  .command('check')
  .description(
    'full integrity check of the store (SQLite: integrity_check of <node.data_dir>/parley.db; PostgreSQL: every row read, indexes with amcheck when installed); safe while the server runs',
  )
  .option('-c, --config <file>', 'TOML config file (default: $PARLEY_CONFIG)')
  .action(async (opts: { config?: string }) => {
    let config: Config;
    try {
      config = load(opts.config);
    } catch (err) {
      fail(err);
    }
    const { checkPostgresStore, checkStoreFile } = await import('@parley/store');
    const report =
      config.store.driver === 'postgres' ? await checkPostgresStore(config.store.postgresUrl) : checkStoreFile(config.node.dataDir);
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    process.exit(report.ok ? 0 : 1);
  });

program
  .command('version')
  .description('print version, commit and build time')
  .option('-o, --output <format>', 'text or json', 'text')
  .action((opts: { output: string }) => {
    const info = versionInfo();
    if (opts.output === 'json') process.stdout.write(`${JSON.stringify(info)}\n`);
    else process.stdout.write(`parley ${info.version} (${info.commit.slice(0, 12)}, ${info.build_time})\n`);
  });

await program.parseAsync(process.argv);
