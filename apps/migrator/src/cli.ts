import process from 'node:process';
import { Command } from 'commander';
import { versionInfo } from '@parley/shared/version';
import type { DiagnoseReport } from './stages/diagnose-stage.ts';
import type { ExportMapReport } from './stages/export-map-stage.ts';
import type { ExportReport } from './stages/export-stage.ts';
import type { ImportReport } from './stages/import-stage.ts';
import type { PrepareReport } from './stages/prepare-stage.ts';
import type { VerifyReport } from './stages/verify-stage.ts';

// A command loads only its own modules: import and verify need the server's store, which takes a second to load,
// and the stage runner loads every shared schema, which `version` does without.

const program = new Command('parleyctl').description('Parley operations: offline migration from WuKongIM v2.2.5, data directory tools');

const migrate = program.command('migrate').description('offline migration stages and tools (see apps/migrator/README.md)');

interface StageOpts {
  plan: string;
  workspace: string;
  archive?: string;
}

migrate
  .command('prepare')
  .description('check the plan and the stopped sources, decode and check every record, seal the selection')
  .requiredOption('--plan <file>', 'plan file (JSON)')
  .requiredOption('--workspace <dir>', 'new workspace directory')
  .action(async (o: StageOpts) => {
    const { newReport, runStage } = await import('./run-stage.ts');
    const report = newReport<PrepareReport>('prepare', { blockers: [], warnings: [] });
    const { runPrepare } = await import('./stages/prepare-stage.ts');
    process.exitCode = await runStage(report, (r, ctx) => runPrepare(o.plan, o.workspace, r, ctx), o.workspace);
  });

migrate
  .command('export')
  .description('recheck the sealed prepare workspace and the sources, write the archive and publish COMPLETE')
  .requiredOption('--plan <file>', 'plan file (JSON)')
  .requiredOption('--workspace <dir>', 'the prepare workspace')
  .requiredOption('--archive <dir>', 'new archive directory')
  .action(async (o: Required<StageOpts>) => {
    const { newReport, runStage } = await import('./run-stage.ts');
    const report = newReport<ExportReport>('export', {});
    const { runExport } = await import('./stages/export-stage.ts');
    process.exitCode = await runStage(report, (r) => runExport(o.plan, o.workspace, o.archive, r));
  });

migrate
  .command('import')
  .description('write every target data directory from the plan and the archive alone')
  .requiredOption('--plan <file>', 'plan file (JSON)')
  .requiredOption('--workspace <dir>', 'new workspace directory')
  .requiredOption('--archive <dir>', 'a complete archive')
  .action(async (o: Required<StageOpts>) => {
    const { newReport, runStage } = await import('./run-stage.ts');
    const report = newReport<ImportReport>('import', { targets: [] });
    const { runImport } = await import('./stages/import-stage.ts');
    process.exitCode = await runStage(report, (r, ctx) => runImport(o.plan, o.workspace, o.archive, r, ctx), o.workspace);
  });

migrate
  .command('verify')
  .description('compare every target field by field with the archive')
  .requiredOption('--plan <file>', 'plan file (JSON)')
  .requiredOption('--workspace <dir>', 'new workspace directory')
  .requiredOption('--archive <dir>', 'a complete archive')
  .action(async (o: Required<StageOpts>) => {
    const { newReport, runStage } = await import('./run-stage.ts');
    const report = newReport<VerifyReport>('verify', { targets: [], mismatches: [] });
    const { runVerify } = await import('./stages/verify-stage.ts');
    process.exitCode = await runStage(report, (r, ctx) => runVerify(o.plan, o.workspace, o.archive, r, ctx), o.workspace);
  });

migrate
  .command('diagnose')
  .description("inventory of everything that blocks the plan, with each blocker's resolution; its own workspace, which prepare refuses")
  .requiredOption('--plan <file>', 'plan file (JSON)')
  .requiredOption('--workspace <dir>', 'new workspace directory')
  .action(async (o: StageOpts) => {
    const { newReport, runStage } = await import('./run-stage.ts');
    const report = newReport<DiagnoseReport>('diagnose', { blockers: [], warnings: [] });
    const { runDiagnose } = await import('./stages/diagnose-stage.ts');
    process.exitCode = await runStage(report, (r, ctx) => runDiagnose(o.plan, o.workspace, r, ctx), o.workspace);
  });

migrate
  .command('export-map')
  .description('rebuild the sequence mapping (compact_sequences) and the duplicate chain proof from a complete archive, checked against it')
  .requiredOption('--plan <file>', 'plan file (JSON)')
  .requiredOption('--workspace <dir>', 'new workspace directory (the rebuilt files go there)')
  .requiredOption('--archive <dir>', 'a complete archive')
  .action(async (o: Required<StageOpts>) => {
    const { newReport, runStage } = await import('./run-stage.ts');
    const report = newReport<ExportMapReport>('export-map', {});
    const { runExportMap } = await import('./stages/export-map-stage.ts');
    process.exitCode = await runStage(report, (r, ctx) => runExportMap(o.plan, o.workspace, o.archive, r, ctx), o.workspace);
  });

program
  .command('version')
  .description('print version, commit and build origin (the same values as `parley version`)')
  .option('-o, --output <format>', 'text or json', 'text')
  .action((opts: { output: string }) => {
    const info = versionInfo();
    if (opts.output === 'json') process.stdout.write(`${JSON.stringify(info)}\n`);
    else process.stdout.write(`parleyctl ${info.version} (${info.commit.slice(0, 12)}, ${info.build_time})\n`);
  });

program
  .command('console')
  .description("serve the operator console on loopback and proxy the nodes' ops routes (apps/console/README.md)")
  .option('--node <url>', "a node's HTTP API base URL; repeat for more nodes", (v: string, all: string[]) => [...all, v], [] as string[])
  .option('--listen <addr>', 'loopback host:port to serve on', '127.0.0.1:5301')
  .option('--no-open', 'do not open a browser')
  .option(
    '--migration-root <dir>',
    'folder of the migration wizard (plans, workspaces, archive, reports, checklists); chosen in the page when absent',
  )
  .action(async (o: { node: string[]; listen: string; open: boolean; migrationRoot?: string }) => {
    const { runConsole } = await import('./console-command.ts');
    process.exitCode = await runConsole(o);
  });

const db = program.command('db').description('data directory tools');
db.command('info')
  .description(
    'format of a directory: a Pebble database (format major version), a v2 data dir (shards, who holds their LOCK) or a Parley data dir (data format, creating tool)',
  )
  .argument('<dir>', 'directory')
  .action(async (dir: string) => {
    const { dbInfoWithLocks } = await import('./db-info.ts');
    let info: Awaited<ReturnType<typeof dbInfoWithLocks>>;
    try {
      info = await dbInfoWithLocks(dir);
    } catch (err) {
      // a marker that is not what this tool writes: say which, without a stack
      process.stderr.write(`parleyctl: db info ${dir}: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
      return;
    }
    process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
    process.exitCode = info.kind === 'unknown' ? 1 : 0;
  });

await program.parseAsync(process.argv);
